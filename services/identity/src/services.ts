import { MemoryCache, serviceAuditLog, type ServiceDeps } from '@attest/common';
import type { IdentityConfig } from './config';
import { AppDirectory, ConsentDirectory, SubjectDirectory, UserDirectory } from './kernel/directories';
import { consentKey, Revocations, sessionKey } from './kernel/revocations';
import { pairwiseSid } from './kernel/ids';
import { Sessions, type Session } from './kernel/sessions';
import { SigningKeys } from './kernel/signing-keys';
import { TokenService } from './kernel/tokens';
import type { OperatorCreatedUserHook } from './kernel/operator-hook';
import { identityLimits } from './kernel/failure-limits';
import type { KernelServices, TokenServices } from './kernel/services';
import { appStore } from './kernel/app-store';
import { consentStore } from './kernel/consent-store';
import { keyStore } from './kernel/key-store';
import { revocationStore } from './kernel/revocation-store';
import { sessionStore } from './kernel/session-store';
import { subjectStore } from './kernel/subject-store';
import { userStore } from './kernel/user-store';
import { memberStore } from './kernel/member-store';
import { AppTeams } from './kernel/teams';
import {
  ClientKeys,
  DpopProofs,
  Grants,
  InteractionLimit,
  InteractionStore,
  PushedRequests,
  type OAuthServices,
} from './oauth';
import {
  BackChannelLogout,
  logoutDeliveryStore,
  passkeyAccounts,
  PasskeyCeremonies,
  Passkeys,
  passkeyStore,
  removePasskeyKeepingOne,
  type SignInServices,
} from './signin';
import { portalServices, type PortalServices } from './portal';
import { MetadataDocuments, Registrations, registrationStore, type RegistrationServices } from './registration';
import { grantResourceRegistered, ResourceDirectory, resourceStore } from './resources';
import { RefreshTokens, refreshStore } from './refresh';
import { BackchannelRequests, backchannelStore, LoginHintTokens, PingNotifier } from './ciba';
import { DeviceFlow, deviceStore } from './device';
import { Delegations, delegationStore } from './delegation';

/** The embedded DPoP replay store: some 400,000 proofs a minute at most (each entry ~60 characters). */
const DPOP_REPLAY_LIMITS = { maxEntries: 500_000, maxChars: 32 * 2 ** 20 };

export interface ServiceOptions {
  /** The clock of session lifetimes and logout delivery retries (tests move it on). */
  now?: () => number;
  /** The portal's HTTP client for its own /token and the transactions admin API (default: fetch). */
  portalFetch?: typeof fetch;
  /** After an operator creates a user through the admin API (pnpm start: its demo app's owner). */
  onOperatorCreatedUser?: OperatorCreatedUserHook;
}

/** The admin API's own services. */
export interface AdminServices {
  /** Runs after an operator creates a user through the admin API (never on self sign-up): see ServiceOptions. */
  onOperatorCreatedUser?: OperatorCreatedUserHook;
}

/**
 * Every service of the identity provider, built once, in groups (each of a few members). app.ts hands
 * each route only the members it uses; tests reach the services through these groups.
 */
export interface IdentityServices {
  kernel: KernelServices;
  tokens: TokenServices;
  oauth: OAuthServices;
  signin: SignInServices;
  portal: PortalServices;
  admin: AdminServices;
  registration: RegistrationServices;
  /** Registered resources (issue 41): RFC 8707 audiences. */
  resources: { resources: ResourceDirectory };
  /** Refresh tokens (issue 41). */
  refresh: { refresh: RefreshTokens };
  /** Backchannel authentication requests: approval of one action (CIBA, issue 42). */
  ciba: { ciba: BackchannelRequests; ping: PingNotifier; hints: LoginHintTokens };
  /** The Device Authorization Grant (issue 41, RFC 8628). */
  device: { device: DeviceFlow };
  /** Agents acting for people (issue 42: token exchange). */
  delegation: { delegations: Delegations };
}

/** Stores → domain: the services, before any route is mounted (buildApp starts and mounts them). */
export function buildServices(deps: ServiceDeps<IdentityConfig>, options: ServiceOptions = {}): IdentityServices {
  const { config, storage, logger } = deps;
  const now = options.now ?? Date.now;
  const { db, cache, bus } = storage;
  const audit = serviceAuditLog(deps);
  const registrations = registrationStore(db);
  // https client_ids: their metadata documents, fetched through the outbound guard (the policy of jwks_uri)
  const metadataDocuments = new MetadataDocuments(registrations, {
    policy: config.outbound,
    enabled: config.CLIENT_ID_METADATA_DOCUMENTS,
    allowDeviceFlow: config.CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW,
    logger,
    audit,
    now,
    firstFetches: {
      cache,
      perAddress: config.REGISTRATIONS_PER_ADDRESS,
      windowSeconds: config.AUTH_FAILURE_WINDOW_SECONDS,
    },
  });
  const apps = new AppDirectory(appStore(db), bus, metadataDocuments, now);
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
  // a withdrawal keeps the app's tokens issued until then inactive, even once it is approved again; its
  // refresh token families end (issue 41)
  const consents = new ConsentDirectory(consentStore(db), bus, async (userId, appId) => {
    await revocations.revokeBefore(
      consentKey(userId, appId),
      new Date(now()),
      new Date(now() + (config.CODE_TTL_SECONDS + config.ACCESS_TOKEN_TTL_SECONDS) * 1000),
    );
    await refresh.endFor(userId, appId);
  });
  const resources = new ResourceDirectory(resourceStore(db), bus);
  const tokens = new TokenService(
    keys,
    config.issuer,
    config.ACCESS_TOKEN_TTL_SECONDS,
    config.ID_TOKEN_TTL_SECONDS,
    now,
    // RFC 9068 §2.1: a resource's choice of its tokens' algorithm
    async (uri) => (await resources.findByUri(uri))?.accessTokenAlg ?? null,
  );
  // An ended session's access tokens (each carries the app's sid of it) are revoked until the last one
  // it may still give has expired: a code issued before the end can be exchanged for one after it.
  const sessionTokens = (ended: Session[]) => ({
    keys: ended.flatMap((s) => s.clientIds.map((clientId) => sessionKey(pairwiseSid(config.secret, clientId, s.id)))),
    expiresAt: new Date(now() + (config.CODE_TTL_SECONDS + config.ACCESS_TOKEN_TTL_SECONDS) * 1000),
  });
  const refresh = new RefreshTokens(
    refreshStore(db),
    { tokens, revocations, users, consents, resources, audit, logger },
    { ttlSeconds: config.REFRESH_TOKEN_TTL_SECONDS, now },
  );
  // CIBA ping mode (issue 42): notifications through the outbound guard, as back-channel logouts
  const ping = new PingNotifier(apps, { targets: config.outbound, logger });
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
            // and their refresh token families (issue 41)
            await refreshStore(tx).endForSids(
              ended.flatMap((e) => e.clientIds.map((clientId) => pairwiseSid(config.secret, clientId, e.id))),
            );
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
  const grants = new Grants(
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
    refresh.issue,
    (resource) => grantResourceRegistered(resources, resource),
  );
  // the Device Authorization Grant (RFC 8628, issue 41)
  const device = new DeviceFlow(
    { store: deviceStore(db), grants, users, consents, sessions, revocations, resources, audit, logger },
    { issuer: config.issuer, secret: config.secret, ttlSeconds: config.DEVICE_CODE_TTL_SECONDS, now },
  );
  const delegations = new Delegations(
    { store: delegationStore(db), tokens, revocations, apps, subjects, users, consents, resources, refresh, audit },
    {
      issuer: config.issuer,
      secret: config.secret,
      ttlSeconds: config.TOKEN_EXCHANGE_TTL_SECONDS,
      // an end stops what it must for as long as any token it stops may live
      endRememberedSeconds:
        config.CODE_TTL_SECONDS + Math.max(config.ACCESS_TOKEN_TTL_SECONDS, config.TOKEN_EXCHANGE_TTL_SECONDS),
    },
  );
  return {
    kernel: {
      config,
      logger,
      cache,
      audit,
      limits: identityLimits(cache, config),
      apps,
      users,
      // a withdrawal keeps the app's tokens issued until then inactive, even once it is approved again
      consents,
      subjects,
      teams: new AppTeams(memberStore(db), users, audit),
    },
    tokens: { keys, tokens, revocations, sessions },
    oauth: {
      grants,
      clientKeys: new ClientKeys(config.outbound, logger, { now }),
      pushedRequests: new PushedRequests(cache, now),
      // embedded: the proofs' jti records live in a store of their own, so a flood of DPoP requests can fill
      // only it (DPoP then answers 503) and never the cache that holds everyone's codes and sign-ins
      dpop: new DpopProofs(cache.mode === 'memory' ? new MemoryCache('', DPOP_REPLAY_LIMITS) : cache, {
        secret: config.secret,
        proofWindowSeconds: config.DPOP_PROOF_MAX_AGE_SECONDS,
        nonceRequired: config.DPOP_NONCE_REQUIRED,
        now,
      }),
      interactions: new InteractionStore(cache),
      interactionLimit: new InteractionLimit(cache, config),
    },
    signin: {
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
      backChannelLogout,
    },
    portal: portalServices(config, db, options.portalFetch ?? fetch),
    admin: { onOperatorCreatedUser: options.onOperatorCreatedUser },
    registration: {
      registrations: new Registrations({ config, store: registrations, apps, cache, audit, logger, now }),
      metadataDocuments,
      store: registrations,
    },
    resources: { resources },
    refresh: { refresh },
    ciba: {
      ciba: new BackchannelRequests(
        backchannelStore(db),
        { cache, bus, audit, logger, ping },
        { keyEncryptionKey: config.keyEncryptionKey, now },
      ),
      ping,
      // login_hint_tokens the person makes an agent on the account page (MACed with a key of IDENTITY_SECRET)
      hints: new LoginHintTokens({ issuer: config.issuer, secret: config.secret, now, agents: delegations }),
    },
    device: { device },
    delegation: { delegations },
  };
}
