import { createServiceAppsFrom, type BuiltService, type ServiceDeps } from '@attest/common';

import { identityAdminApi, identityAdminRoutes } from './admin';
import type { IdentityConfig } from './config';
import type { AccessTokenClaims } from './kernel/tokens';
import { assetsRoute, logoutRoute, signInFlow, signInRoute, signUpRoute } from './signin';
import {
  authorizationFlow,
  authorizeRoute,
  consentRoute,
  discoveryRoute,
  grantHolder,
  introspectRoute,
  jwksRoute,
  parRoute,
  revokeRoute,
  tokenRoute,
  userinfoRoute,
} from './oauth';
import { accountRoute } from './account';
import { identityApi } from './api-documents';
import { ensurePortalClient, portalRoutes } from './portal';
import { consentCoversToken, issuedToThisResource, resourceAdminRoutes, resourceIntrospection } from './resources';
import { refreshTokenGrant } from './refresh';
import { clientCredentialsGrant, isClientToken } from './client-credentials';
import { DEVICE_CODE_GRANT, deviceAuthorizationRoute, deviceCodeGrant, deviceRoute } from './device';
import { delegationSection, TOKEN_EXCHANGE_GRANT, tokenExchangeGrant } from './delegation';
import { buildServices, type IdentityServices } from './services';
import {
  approvalRoute,
  approvalSection,
  bcAuthorizeRoute,
  CIBA_GRANT_TYPE,
  cibaGrant,
  loginHintSection,
  pendingApprovalsNotice,
} from './ciba';
import { authorizationServerRoute, registerRoute, registrationAdminRoutes } from './registration';

export { buildServices, type IdentityServices, type ServiceOptions } from './services';

/**
 * Composition root: stores → domain (buildServices) → routes, for both the public and the admin
 * listener. Each route receives only the services it uses.
 */
export async function buildApp(
  deps: ServiceDeps<IdentityConfig>,
  services: IdentityServices = buildServices(deps),
): Promise<BuiltService> {
  const { config, logger, cache, audit, limits, apps, users, consents, subjects, teams } = services.kernel;
  const { portal } = services;
  const { keys, tokens, revocations, sessions } = services.tokens;
  const { grants, clientKeys, pushedRequests, dpop, interactions, interactionLimit } = services.oauth;
  const { passkeys, createPasskeyAccount, backChannelLogout } = services.signin;
  // a key of every advertised algorithm (RS256, PS256, ES256) in the JWKS before the first request
  await keys.ensureKeys();
  await revocations.start();
  if (config.portal.enabled)
    await ensurePortalClient({ config, logger: deps.logger, apps, audit, clientId: portal.clientId });
  audit.start();
  sessions.start();
  services.refresh.refresh.start();
  services.registration.registrations.start();
  const { ciba } = services.ciba;
  ciba.start();
  services.device.device.start();
  backChannelLogout.start();
  // the authorization request's way: /authorize begins it; sign-in and consent move it on
  const proceeding = { apps, config, consents, users, sessions, grants, interactions };
  const flow = authorizationFlow({ ...proceeding, interactionLimit });
  const signIn = signInFlow(proceeding);
  const clientAuth = { apps, cache, config, limits, tokens, clientKeys };
  const { resources } = services.resources;
  const { device } = services.device;
  const { delegations } = services.delegation;
  const holders = { consents, subjects, users, revocations };
  // a token for a resource is active while its grant holds: its session, its app, the person, the consent
  const resourceTokenActive = async (claims: AccessTokenClaims): Promise<boolean> => {
    // an agent acting for a person (issue 42): while the person has not ended it
    if (claims.act) return delegations.holds(claims);
    // an app acting as itself (client_credentials): while the token is not revoked and the app is enabled
    if (isClientToken(claims)) {
      const app = await apps.find(claims.client_id);
      return !!app && !app.disabledAt && !(await revocations.isRevoked(claims.jti));
    }
    // a person's: while the consent covers the resource and each scope of the token (consentCoversToken)
    return (await grantHolder({ ...holders, apps }, claims, (granted) => consentCoversToken(granted, claims))) !== null;
  };
  const resourceServers = resourceIntrospection({
    config,
    limits,
    tokens,
    resources,
    revocations,
    active: resourceTokenActive,
  });
  // the app's own introspection of a token for a resource: the same, while the resource is the one registered now
  const appResourceTokenActive = async (claims: AccessTokenClaims): Promise<boolean> => {
    const resource = await resources.findByUri(claims.aud);
    return !!resource && issuedToThisResource(revocations, resource, claims.iat) && resourceTokenActive(claims);
  };
  const built = createServiceAppsFrom(deps, {
    service: 'identity',
    audit,
    publicUrl: deps.config.BASE_URL,
    publicApi: identityApi(deps.config.issuer),
    adminApi: identityAdminApi(),
    publicRoutes(router) {
      // pending approvals (issue 42): a notice at the top of these pages for a signed-in person
      router.use(['/account', '/signin', '/consent'], pendingApprovalsNotice({ config, users, sessions, ciba }));
      discoveryRoute(router, { config });
      authorizationServerRoute(router, { config });
      jwksRoute(router, { keys });
      authorizeRoute(router, {
        apps,
        cache,
        config,
        users,
        sessions,
        tokens,
        clientKeys,
        pushedRequests,
        flow,
        resources,
      });
      signInRoute(router, { apps, audit, config, limits, logger, users, passkeys, flow: signIn });
      consentRoute(router, { ...proceeding, audit, revocations, tokens });
      signUpRoute(router, { apps, audit, config, limits, logger, users, passkeys, createPasskeyAccount, flow: signIn });
      accountRoute(router, {
        ...{ audit, config, consents, limits, logger, users, sessions, passkeys },
        panels: [approvalSection({ apps, passkeys, ciba })],
        sections: [
          delegationSection(delegations),
          loginHintSection({ apps, hints: services.ciba.hints, agents: delegations }),
        ],
      });
      approvalRoute(router, { audit, config, consents, limits, users, sessions, passkeys, ciba });
      assetsRoute(router);
      tokenRoute(router, {
        ...clientAuth,
        dpop,
        grants,
        grantTypes: {
          refresh_token: refreshTokenGrant({ config, dpop, refresh: services.refresh.refresh }),
          client_credentials: clientCredentialsGrant({ config, dpop, tokens, resources }),
          [CIBA_GRANT_TYPE]: cibaGrant({ config, dpop, tokens, users, ciba, audit }),
          [DEVICE_CODE_GRANT]: deviceCodeGrant({ config, dpop, device }),
          [TOKEN_EXCHANGE_GRANT]: tokenExchangeGrant({ config, dpop, delegations }),
        },
      });
      bcAuthorizeRoute(router, {
        ...clientAuth,
        subjects,
        users,
        ciba,
        hints: services.ciba.hints,
      });
      deviceAuthorizationRoute(router, { ...clientAuth, device });
      deviceRoute(router, { apps, config, limits, users, sessions, device });
      parRoute(router, { ...clientAuth, dpop, pushedRequests, resources });
      introspectRoute(router, { ...clientAuth, holders, resourceServers, resourceTokenActive: appResourceTokenActive });
      userinfoRoute(router, { apps, config, consents, subjects, users, revocations, tokens, dpop });
      logoutRoute(router, { apps, config, logger, users, sessions, tokens });
      revokeRoute(router, { ...clientAuth, logger, revocations, refreshTokens: services.refresh.refresh });
      registerRoute(router, { config, registrations: services.registration.registrations });
      if (config.portal.enabled)
        portalRoutes(router, { config, logger, cache, audit, apps, users, subjects, keys, teams, portal });
    },
    adminRoutes(router) {
      identityAdminRoutes(router, {
        apps: { config, logger, audit, apps },
        members: { apps, teams },
        users: { config, logger, audit, users, consents, subjects, sessions, teams, ...services.admin },
        sessions: { sessions, audit },
        keys: { keys, audit },
      });
      registrationAdminRoutes(router, { config, audit, store: services.registration.store, now: tokens.now });
      resourceAdminRoutes(router, { config, audit, consents, resources, revocations, now: tokens.now });
    },
  });
  return {
    ...built,
    stop: async () => {
      revocations.stop();
      sessions.stop();
      services.refresh.refresh.stop();
      services.registration.registrations.stop();
      ciba.stop();
      await services.ciba.ping.settled();
      services.device.device.stop();
      await backChannelLogout.stop();
      await audit.stop();
    },
  };
}
