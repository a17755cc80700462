import { AuditLog, MemoryCache, createServiceApps, type BuiltService, type ServiceDeps } from '@attest/common';

import { identityAdminRoutes } from './admin/admin-routes';
import { identityAdminApi } from './admin/admin-document';
import type { IdentityConfig } from './config';
import { AppDirectory, ConsentDirectory, SubjectDirectory, UserDirectory } from './domain/directories';
import { passkeyAccounts } from './domain/accounts';
import { DpopProofs } from './domain/dpop';
import { Grants } from './domain/grants';
import { PasskeyCeremonies, Passkeys } from './domain/passkeys';
import { consentKey, Revocations, sessionKey } from './domain/revocations';
import { pairwiseSid } from './domain/ids';
import { BackChannelLogout } from './domain/backchannel-logout';
import { ClientKeys } from './domain/client-keys';
import { PushedRequests } from './domain/pushed-requests';
import { InteractionStore, Sessions, type Session } from './domain/sessions';
import { SigningKeys } from './domain/signing-keys';
import { TokenService } from './domain/tokens';
import { accountRoute } from './routes/account-route';
import { assetsRoute } from './routes/assets-route';
import { authorizeRoute } from './routes/authorize-route';
import { consentRoute } from './routes/consent-route';
import type { IdentityContext, OperatorCreatedUserHook } from './routes/context';
import { identityLimits } from './routes/failure-limits';
import { InteractionLimit } from './routes/interaction-limit';
import { discoveryRoute } from './routes/discovery-route';
import { introspectRoute } from './routes/introspect-route';
import { jwksRoute } from './routes/jwks-route';
import { logoutRoute } from './routes/logout-route';
import { revokeRoute } from './routes/revoke-route';
import { identityApi } from './routes/openapi-document';
import { signInRoute } from './routes/signin-route';
import { signUpRoute } from './routes/signup-route';
import { tokenRoute } from './routes/token-route';
import { parRoute } from './routes/par-route';
import { userinfoRoute } from './routes/userinfo-route';
import { appStore } from './store/app-store';
import { consentStore } from './store/consent-store';
import { keyStore } from './store/key-store';
import { logoutDeliveryStore } from './store/logout-delivery-store';
import { passkeyStore, removePasskeyKeepingOne } from './store/passkey-store';
import { revocationStore } from './store/revocation-store';
import { sessionStore } from './store/session-store';
import { subjectStore } from './store/subject-store';
import { userStore } from './store/user-store';
import { insightStore, memberStore } from './store/member-store';
import { AppTeams } from './domain/teams';
import { ensurePortalClient, portalClientId } from './portal/portal-client';
import { TransactionsAdmin } from './portal/transactions-admin';
import { portalRoutes } from './routes/portal-route';

/** The embedded DPoP replay store: some 400,000 proofs a minute at most (each entry ~60 characters). */
const DPOP_REPLAY_LIMITS = { maxEntries: 500_000, maxChars: 32 * 2 ** 20 };

export interface ContextOptions {
  /** The clock of session lifetimes and logout delivery retries (tests move it on). */
  now?: () => number;
  /** The portal's HTTP client for its own /token and the transactions admin API (default: fetch). */
  portalFetch?: typeof fetch;
  /** After an operator creates a user through the admin API (pnpm start: its demo app's owner). */
  onOperatorCreatedUser?: OperatorCreatedUserHook;
}

export function buildContext(deps: ServiceDeps<IdentityConfig>, options: ContextOptions = {}): IdentityContext {
  const { config, storage, logger } = deps;
  const now = options.now ?? Date.now;
  const { db, cache, bus } = storage;
  const apps = new AppDirectory(appStore(db), bus);
  const users = new UserDirectory(userStore(db), bus);
  const subjects = new SubjectDirectory(subjectStore(db), bus);
  const keys = new SigningKeys(
    keyStore(db),
    {
      keyEncryptionKey: config.keyEncryptionKey,
      rotationMs: config.KEY_ROTATION_DAYS * 86400000,
      maxTokenTtlMs: Math.max(config.ACCESS_TOKEN_TTL_SECONDS, config.ID_TOKEN_TTL_SECONDS) * 1000,
    },
    logger,
    bus,
  );
  const revocations = new Revocations(revocationStore(db), bus, logger);
  const audit = new AuditLog(db, logger, { retentionDays: config.AUDIT_RETENTION_DAYS });
  const tokens = new TokenService(
    keys,
    config.issuer,
    config.ACCESS_TOKEN_TTL_SECONDS,
    config.ID_TOKEN_TTL_SECONDS,
    now,
  );
  // An ended session's access tokens (each carries the app's sid of it) are revoked until the last one
  // it may still give has expired: a code issued before the end can be exchanged for one after it.
  const sessionTokens = (ended: Session[]) => ({
    keys: ended.flatMap((s) => s.clientIds.map((clientId) => sessionKey(pairwiseSid(config.secret, clientId, s.id)))),
    expiresAt: new Date(now() + (config.CODE_TTL_SECONDS + config.ACCESS_TOKEN_TTL_SECONDS) * 1000),
  });
  const backChannelLogout = new BackChannelLogout(logoutDeliveryStore(db), tokens, logger, {
    secret: config.secret,
    intervalMs: 5000,
    maxAttempts: config.BACKCHANNEL_LOGOUT_ATTEMPTS,
    targets: config.outbound,
    now,
  });
  const sessions = new Sessions(
    sessionStore(db),
    {
      // a session ends and its back-channel logouts are owed in one transaction: both, or neither
      inTransaction: (fn) =>
        db.transaction((tx) =>
          fn(sessionStore(tx), async (ended) => {
            // everything inside reads through `tx`: the embedded database has a single connection
            const outbox = logoutDeliveryStore(tx);
            const uris = await outbox.backchannelUris(ended.flatMap((s) => s.clientIds));
            await outbox.enqueue(backChannelLogout.deliveriesFor(ended, uris), new Date(now()));
            const revoked = sessionTokens(ended);
            await revocationStore(tx).revoke(revoked.keys, revoked.expiresAt);
          }),
        ),
      kick: () => backChannelLogout.kick(),
      afterEnd: async (ended) => {
        const revoked = sessionTokens(ended);
        await revocations.announce(revoked.keys, revoked.expiresAt);
      },
    },
    bus,
    { idleSeconds: config.sessionIdleSeconds, maxAgeSeconds: config.sessionMaxAgeSeconds },
    logger,
    now,
  );
  const portalFetch = options.portalFetch ?? fetch;
  return {
    config,
    logger,
    cache,
    teams: new AppTeams(memberStore(db), users, audit),
    insight: insightStore(db),
    portalClientId: portalClientId(config.secret),
    transactionsAdmin: new TransactionsAdmin(
      config.portal.transactionsAdminUrl,
      config.portal.transactionsAdminToken,
      portalFetch,
    ),
    portalFetch,
    onOperatorCreatedUser: options.onOperatorCreatedUser,
    apps,
    users,
    subjects,
    // a withdrawal keeps the app's tokens issued until then inactive, even once it is approved again
    consents: new ConsentDirectory(consentStore(db), bus, (userId, appId) =>
      revocations.revokeBefore(
        consentKey(userId, appId),
        new Date(now()),
        new Date(now() + (config.CODE_TTL_SECONDS + config.ACCESS_TOKEN_TTL_SECONDS) * 1000),
      ),
    ),
    keys,
    clientKeys: new ClientKeys(config.outbound, logger, { now }),
    pushedRequests: new PushedRequests(cache, now),
    tokens,
    revocations,
    // embedded: the proofs' jti records live in a store of their own, so a flood of DPoP requests can fill
    // only it (DPoP then answers 503) and never the cache that holds everyone's codes and sign-ins
    dpop: new DpopProofs(cache.mode === 'memory' ? new MemoryCache('', DPOP_REPLAY_LIMITS) : cache, {
      secret: config.secret,
      proofWindowSeconds: config.DPOP_PROOF_MAX_AGE_SECONDS,
      nonceRequired: config.DPOP_NONCE_REQUIRED,
      now,
    }),
    grants: new Grants(
      cache,
      tokens,
      users,
      subjects,
      revocations,
      {
        issuer: config.issuer,
        emailDomain: config.emailDomain,
        secret: config.secret,
        codeTtlSeconds: config.CODE_TTL_SECONDS,
      },
      audit,
    ),
    sessions,
    backChannelLogout,
    interactions: new InteractionStore(cache),
    limits: identityLimits(cache, config),
    interactionLimit: new InteractionLimit(cache, config),
    audit,
    passkeys: new Passkeys(
      passkeyStore(db),
      new PasskeyCeremonies(cache, config.PASSKEY_CHALLENGE_TTL_SECONDS, config.secret),
      {
        ...config.passkeyRp,
        ttlSeconds: config.PASSKEY_CHALLENGE_TTL_SECONDS,
        userVerification: config.PASSKEY_USER_VERIFICATION,
      },
      (userId, id) => removePasskeyKeepingOne(db, userId, id),
    ),
    createPasskeyAccount: passkeyAccounts(db, users),
  };
}

/** Composition root: stores → domain → routes, for both the public and the admin listener. */
export async function buildApp(
  deps: ServiceDeps<IdentityConfig>,
  ctx: IdentityContext = buildContext(deps),
): Promise<BuiltService> {
  await ctx.keys.signingKey();
  await ctx.revocations.start();
  if (ctx.config.portal.enabled) await ensurePortalClient(ctx, deps.logger);
  ctx.audit.start();
  ctx.sessions.start();
  ctx.backChannelLogout.start();
  const apps = createServiceApps({
    service: 'identity',
    logger: deps.logger,
    readiness: deps.readiness,
    adminToken: deps.adminToken,
    adminTokens: deps.config.ADMIN_TOKENS,
    audit: { log: ctx.audit, db: deps.storage.db },
    trustProxy: deps.config.TRUST_PROXY,
    publicUrl: deps.config.BASE_URL,
    bodyLimit: deps.config.BODY_LIMIT,
    publicApi: identityApi(deps.config.issuer),
    adminApi: identityAdminApi(),
    publicRoutes(router) {
      discoveryRoute(router, ctx);
      jwksRoute(router, ctx);
      authorizeRoute(router, ctx);
      signInRoute(router, ctx);
      consentRoute(router, ctx);
      signUpRoute(router, ctx);
      accountRoute(router, ctx);
      assetsRoute(router);
      tokenRoute(router, ctx);
      parRoute(router, ctx);
      introspectRoute(router, ctx);
      userinfoRoute(router, ctx);
      logoutRoute(router, ctx);
      revokeRoute(router, ctx);
      if (ctx.config.portal.enabled) portalRoutes(router, ctx);
    },
    adminRoutes(router) {
      identityAdminRoutes(router, ctx);
    },
  });
  return {
    ...apps,
    stop: async () => {
      ctx.revocations.stop();
      ctx.sessions.stop();
      await ctx.backChannelLogout.stop();
      await ctx.audit.stop();
    },
  };
}
