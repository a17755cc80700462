import { createServiceApps, openApiRoute, type BuiltService, type ServiceDeps } from '@attest/common';
import { identityAdminRoutes } from './admin/admin-routes';
import type { IdentityConfig } from './config';
import { AppDirectory, ConsentDirectory, SubjectDirectory, UserDirectory } from './domain/directories';
import { passkeyAccounts } from './domain/accounts';
import { Grants } from './domain/grants';
import { PasskeyCeremonies, Passkeys } from './domain/passkeys';
import { Revocations } from './domain/revocations';
import { InteractionStore, SessionStore } from './domain/sessions';
import { SigningKeys } from './domain/signing-keys';
import { TokenService } from './domain/tokens';
import { accountRoute } from './routes/account-route';
import { assetsRoute } from './routes/assets-route';
import { authorizeRoute } from './routes/authorize-route';
import { consentRoute } from './routes/consent-route';
import type { IdentityContext } from './routes/context';
import { identityLimits } from './routes/failure-limits';
import { discoveryRoute } from './routes/discovery-route';
import { introspectRoute } from './routes/introspect-route';
import { jwksRoute } from './routes/jwks-route';
import { identityOpenApi } from './routes/openapi-document';
import { signInRoute } from './routes/signin-route';
import { signUpRoute } from './routes/signup-route';
import { tokenRoute } from './routes/token-route';
import { userinfoRoute } from './routes/userinfo-route';
import { appStore } from './store/app-store';
import { consentStore } from './store/consent-store';
import { keyStore } from './store/key-store';
import { passkeyStore } from './store/passkey-store';
import { revocationStore } from './store/revocation-store';
import { subjectStore } from './store/subject-store';
import { userStore } from './store/user-store';

export function buildContext(deps: ServiceDeps<IdentityConfig>): IdentityContext {
  const { config, storage, logger } = deps;
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
  const tokens = new TokenService(keys, config.issuer, config.ACCESS_TOKEN_TTL_SECONDS, config.ID_TOKEN_TTL_SECONDS);
  return {
    config,
    logger,
    cache,
    apps,
    users,
    subjects,
    consents: new ConsentDirectory(consentStore(db), bus),
    keys,
    tokens,
    revocations,
    grants: new Grants(cache, tokens, users, subjects, revocations, {
      issuer: config.issuer,
      emailDomain: config.emailDomain,
      secret: config.secret,
      codeTtlSeconds: config.CODE_TTL_SECONDS,
    }),
    sessions: new SessionStore(cache, config.SESSION_TTL_SECONDS),
    interactions: new InteractionStore(cache),
    limits: identityLimits(cache, config),
    passkeys: new Passkeys(passkeyStore(db), new PasskeyCeremonies(cache, config.PASSKEY_CHALLENGE_TTL_SECONDS), {
      ...config.passkeyRp,
      ttlSeconds: config.PASSKEY_CHALLENGE_TTL_SECONDS,
    }),
    createPasskeyAccount: passkeyAccounts(db, users),
  };
}

/** Composition root: stores → domain → routes, for both the public and the admin listener. */
export async function buildApp(deps: ServiceDeps<IdentityConfig>, ctx: IdentityContext = buildContext(deps)): Promise<BuiltService> {
  await ctx.keys.signingKey();
  await ctx.revocations.start();
  const apps = createServiceApps({
    service: 'identity',
    logger: deps.logger,
    readiness: deps.readiness,
    adminToken: deps.adminToken,
    trustProxy: deps.config.TRUST_PROXY,
    bodyLimit: deps.config.BODY_LIMIT,
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
      introspectRoute(router, ctx);
      userinfoRoute(router, ctx);
      openApiRoute(router, identityOpenApi(deps.config.issuer));
    },
    adminRoutes(router) {
      identityAdminRoutes(router, ctx);
    },
  });
  return { ...apps, stop: async () => ctx.revocations.stop() };
}
