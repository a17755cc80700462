import type { NextFunction, Request, Response, Router } from 'express';
import { endpoint } from '@attest/common';
import type { IdentityContext } from './context';
import { checkForm } from './form-check';
import { REVOKE_FORM } from './form-schemas';
import { refuseBlockedClient } from './failure-limits';
import {
  authenticateApp,
  authenticatedApp,
  field,
  hasClientAssertion,
  missingAppCredentials,
  noStore,
  parseForm,
  requireFormContentType,
} from './steps';
import { identityDocs } from './openapi-document';

export { REVOKE_FORM };

/** SPEC: the Basic header; or, for a private_key_jwt app, a client_assertion in the form. */
const requireAuthorizationHeader = (req: Request, _res: Response, next: NextFunction) =>
  next(req.get('authorization') || hasClientAssertion(req) ? undefined : missingAppCredentials());

/**
 * POST /revoke: OAuth 2.0 Token Revocation (RFC 7009), with app authentication exactly as at /introspect.
 * Access tokens are the only tokens issued, so token_type_hint is read but never narrows the search.
 * An unknown, malformed or expired token, and another app's token, all answer 200 and change nothing;
 * a revoked token is inactive on every replica within a second, durably (domain/revocations.ts).
 */
export function revokeRoute(router: Router, ctx: IdentityContext): void {
  const revoke = async (req: Request, res: Response) => {
    const result = await ctx.tokens.verifyAccessToken(field(req, 'token')!);
    if (result.ok && result.claims.client_id === authenticatedApp(res).id) {
      await ctx.revocations.revoke([result.claims.jti], new Date(result.claims.exp * 1000));
      ctx.logger.info('access token revoked', { app_id: result.claims.client_id });
    }
    res.status(200).end();
  };
  endpoint(
    router,
    '/revoke',
    {
      POST: [
        noStore,
        requireFormContentType,
        parseForm(ctx.config.BODY_LIMIT),
        checkForm(REVOKE_FORM, ['token']),
        requireAuthorizationHeader,
        refuseBlockedClient(ctx.limits),
        authenticateApp(ctx, { allowPost: false }),
        checkForm(REVOKE_FORM, ['token_type_hint']),
        revoke,
      ],
    },
    identityDocs.revoke,
  );
}
