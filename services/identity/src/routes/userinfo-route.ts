import type { NextFunction, Request, Response, Router } from 'express';
import { endpoint, errors, sendJson } from '@attest/common';
import { grantHolder } from '../domain/active-grant';
import { userClaims } from '../domain/claims';
import type { AccessTokenClaims } from '../domain/tokens';
import type { User } from '../store/user-store';
import type { IdentityContext } from './context';
import { invalidToken } from './introspect-route';
import { noStore, openCors } from './steps';
import { identityDocs } from './openapi-document';

const signInClaim = (claims: AccessTokenClaims, name: string): unknown =>
  name === 'acr' ? claims.acr : name === 'amr' ? claims.amr : name === 'auth_time' ? claims.auth_time : undefined;

const BEARER_INVALID = 'Bearer realm="attest", error="invalid_token", error_description="Token is invalid or expired."';

/** GET|POST|OPTIONS /userinfo (SPEC 4.5, 2.4): the claims of the approved scopes, for a valid access token. */
export function userinfoRoute(router: Router, ctx: IdentityContext): void {
  const bearer = (req: Request, res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    if (!header) return next(errors.unauthenticated('Missing credentials.', 'Bearer realm="attest"'));
    const match = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(header);
    if (!match) return next(invalidToken(BEARER_INVALID));
    res.locals.token = match[1];
    next();
  };
  const verify = async (_req: Request, res: Response, next: NextFunction) => {
    const result = await ctx.tokens.verifyAccessToken(res.locals.token as string);
    const user = result.ok ? await grantHolder(ctx, result.claims) : null;
    if (!result.ok || !user) return next(invalidToken(BEARER_INVALID));
    res.locals.claims = result.claims;
    res.locals.user = user;
    next();
  };
  const userinfo = (_req: Request, res: Response) => {
    const claims = res.locals.claims as AccessTokenClaims;
    const user = res.locals.user as User;
    const out = userClaims(ctx.config.issuer, ctx.config.emailDomain, claims.sub, user, claims.scope.split(' '));
    // the sign-in claims the claims parameter asked /userinfo for, as the token states them
    for (const name of claims.userinfo_claims ?? []) {
      const value = signInClaim(claims, name);
      if (value !== undefined) out[name] = value;
    }
    sendJson(res, out);
  };
  const cors = openCors('GET, POST');
  endpoint(
    router,
    '/userinfo',
    {
      GET: [cors, noStore, bearer, verify, userinfo],
      POST: [cors, noStore, bearer, verify, userinfo],
      OPTIONS: [cors],
    },
    identityDocs.userinfo,
  );
}
