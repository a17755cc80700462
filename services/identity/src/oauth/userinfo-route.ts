import type { NextFunction, Request, Response, Router } from 'express';
import { AppError, endpoint, errors, sendJson } from '@attest/common';
import { grantHolder } from './active-grant';
import { userClaims } from './claims';
import { dpopChallenge, DpopError, dpopHeader } from './dpop';
import type { AccessTokenClaims } from '../kernel/tokens';
import type { User } from '../kernel/user-store';
import type { KernelServices, TokenServices } from '../kernel/services';
import type { OAuthServices } from './services';
import { invalidToken } from './introspect-route';
import { noStore, openCors } from '../kernel/http-steps';
import { userinfoDocs } from './userinfo-route.openapi';

const signInClaim = (claims: AccessTokenClaims, name: string): unknown =>
  name === 'acr' ? claims.acr : name === 'amr' ? claims.amr : name === 'auth_time' ? claims.auth_time : undefined;

const BEARER_INVALID = 'Bearer realm="attest", error="invalid_token", error_description="Token is invalid or expired."';
const DPOP_INVALID = dpopChallenge('invalid_token', 'Token is invalid or expired.');

/** A refusal of the DPoP scheme (RFC 9449 §7.1): 401 with a DPoP challenge naming the error. */
const dpopRefusal = (error: string, description: string, headers: Record<string, string> = {}) =>
  new AppError(error, 401, description, error === 'invalid_token' ? 'token' : 'DPoP', {
    headers: { 'WWW-Authenticate': dpopChallenge(error, description), ...headers },
  });

/**
 * GET|POST|OPTIONS /userinfo (SPEC 4.5, 2.4): the claims of the approved scopes, for a valid access token.
 * `Authorization: Bearer` as before (one token verification, remembered; no new lookup), except that a
 * DPoP-bound token (cnf.jkt) is refused as a bearer token. `Authorization: DPoP` with a DPoP proof
 * (RFC 9449 §7): the proof's htm, htu, iat, ath (the token's hash) and key (the token's cnf.jkt), and its
 * jti once (one cache write).
 */
/** What /userinfo uses: the access token's checks (DPoP, revocations) and its holder (grantHolder). */
export type UserinfoRouteDeps = Pick<KernelServices, 'apps' | 'config' | 'consents' | 'subjects' | 'users'> &
  Pick<TokenServices, 'revocations' | 'tokens'> &
  Pick<OAuthServices, 'dpop'>;

export function userinfoRoute(router: Router, ctx: UserinfoRouteDeps): void {
  const htu = `${ctx.config.issuer}/userinfo`;
  const bearer = (req: Request, res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    if (!header) return next(errors.unauthenticated('Missing credentials.', 'Bearer realm="attest"'));
    const match = /^(Bearer|DPoP)\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(header);
    if (!match) return next(invalidToken(BEARER_INVALID));
    res.locals.dpop = match[1].toLowerCase() === 'dpop';
    res.locals.token = match[2];
    next();
  };
  const verify = async (req: Request, res: Response, next: NextFunction) => {
    const token = res.locals.token as string;
    const dpop = res.locals.dpop as boolean;
    if (dpop) {
      res.set({ 'DPoP-Nonce': ctx.dpop.nonce(), 'Access-Control-Expose-Headers': 'DPoP-Nonce, WWW-Authenticate' });
    }
    const result = await ctx.tokens.verifyAccessToken(token);
    // a token for a resource (RFC 8707: its aud is that resource) is not for /userinfo
    if (!result.ok || result.claims.aud !== ctx.config.issuer)
      return next(invalidToken(dpop ? DPOP_INVALID : BEARER_INVALID));
    const bound = result.claims.cnf?.jkt;
    if (!dpop && bound !== undefined)
      return next(
        dpopRefusal(
          'invalid_token',
          'This access token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof.',
        ),
      );
    if (dpop) {
      if (bound === undefined)
        return next(dpopRefusal('invalid_token', 'This access token is not DPoP-bound: send it as a Bearer token.'));
      try {
        const proof = await ctx.dpop.verify(dpopHeader(req), { htm: req.method, htu, accessToken: token });
        if (proof.jkt !== bound)
          return next(
            dpopRefusal('invalid_dpop_proof', 'The DPoP proof is not signed by the key the token is bound to.'),
          );
      } catch (err) {
        if (!(err instanceof DpopError)) throw err;
        return next(dpopRefusal(err.error, err.description));
      }
    }
    const user = await grantHolder(ctx, result.claims);
    if (!user) return next(invalidToken(dpop ? DPOP_INVALID : BEARER_INVALID));
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
  const cors = openCors('GET, POST', 'Authorization, Content-Type, DPoP');
  endpoint(
    router,
    '/userinfo',
    {
      GET: [cors, noStore, bearer, verify, userinfo],
      POST: [cors, noStore, bearer, verify, userinfo],
      OPTIONS: [cors],
    },
    userinfoDocs,
    { fast: true },
  );
}
