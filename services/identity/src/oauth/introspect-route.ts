import type { Request, RequestHandler, Response, Router } from 'express';
import { AppError, endpoint, sendJson } from '@attest/common';
import { grantHolder } from './active-grant';
import type { KernelServices, TokenServices } from '../kernel/services';
import type { ClientAuthDeps } from './client-authentication';
import type { AccessTokenClaims } from '../kernel/tokens';
import { INTROSPECT_FORM } from './oauth-forms';
import { appAuthenticatedTokenForm, authenticatedApp, field } from './client-authentication';
import { introspectDocs } from './introspect-route.openapi';

export { INTROSPECT_FORM };

export const invalidToken = (scheme?: string) =>
  new AppError(
    'invalid_token',
    401,
    'Token is invalid or expired.',
    'token',
    scheme ? { headers: { 'WWW-Authenticate': scheme } } : {},
  );

/**
 * POST /introspect (SPEC 4.4): method → content type → token → Authorization header → failure limits →
 * credentials → token.
 * Malformed, forged or expired: 401 invalid_token. Revoked (the token, its session, its consent before a
 * withdrawal, or its signing key), or another app's: RFC 7662 {"active": false}.
 */
/** What /introspect uses: client authentication, and the grant's holder (grantHolder). */
export type IntrospectRouteDeps = ClientAuthDeps & {
  /** What grantHolder reads besides the apps. */
  holders: Pick<KernelServices, 'consents' | 'subjects' | 'users'> & Pick<TokenServices, 'revocations'>;
  /**
   * A resource server's introspection (issue 41), which answers a request whose Basic user is a resource_id
   * and passes any other on to the app's. Absent, apps alone introspect.
   */
  resourceServers?: RequestHandler;
  /**
   * Whether a token for a resource (RFC 8707: `aud` a registered resource's uri; a person's, an app's own
   * client_credentials token, or a delegated one with `act`) is still active; absent, none is.
   */
  resourceTokenActive?: (claims: AccessTokenClaims) => Promise<boolean>;
};

/** The app's steps, with a resource server's introspection just before the app's credentials are checked. */
function resourceServersFirst(
  steps: RequestHandler[],
  resourceServers: RequestHandler | undefined,
  introspect: RequestHandler,
): RequestHandler[] {
  if (!resourceServers) return [...steps, introspect];
  const credentials = steps.length - 1;
  return [...steps.slice(0, credentials), resourceServers, ...steps.slice(credentials), introspect];
}

export function introspectRoute(router: Router, ctx: IntrospectRouteDeps): void {
  const introspect = async (req: Request, res: Response) => {
    const result = await ctx.tokens.verifyAccessToken(field(req, 'token')!);
    // signed by a key an emergency rotation revoked: ours, but no longer valid
    if (!result.ok && result.reason === 'revoked') return sendJson(res, { active: false });
    if (!result.ok) throw invalidToken();
    const { claims } = result;
    const active =
      claims.client_id === authenticatedApp(res).id &&
      (claims.act || claims.aud !== ctx.config.issuer
        ? ((await ctx.resourceTokenActive?.(claims)) ?? false)
        : (await grantHolder({ ...ctx.holders, apps: ctx.apps }, claims)) !== null);
    if (!active) return sendJson(res, { active: false });
    sendJson(res, {
      active: true,
      client_id: claims.client_id,
      exp: claims.exp,
      sub: claims.sub,
      scope: claims.scope,
      iat: claims.iat,
      // RFC 9449 §6.2: a DPoP-bound token says so, with the thumbprint of its key
      ...(claims.cnf ? { token_type: 'DPoP', cnf: { jkt: claims.cnf.jkt } } : { token_type: 'Bearer' }),
      // the sign-in behind the token, for an API's RFC 9470 step-up
      ...(claims.acr === undefined ? {} : { acr: claims.acr }),
      ...(claims.amr === undefined ? {} : { amr: claims.amr }),
      ...(claims.auth_time === undefined ? {} : { auth_time: claims.auth_time }),
      // RFC 9396 §9.2: what the person approved (CIBA, issue 42)
      ...(claims.authorization_details ? { authorization_details: claims.authorization_details } : {}),
      // RFC 8693 §4.1 (issue 42): the agent acting for sub
      ...(claims.act ? { act: claims.act } : {}),
    });
  };
  endpoint(
    router,
    '/introspect',
    {
      POST: resourceServersFirst(appAuthenticatedTokenForm(ctx, INTROSPECT_FORM), ctx.resourceServers, introspect),
    },
    introspectDocs,
    { fast: true },
  );
}
