import type { Request, Response, Router } from 'express';
import { endpoint } from '@attest/common';
import type { KernelServices, TokenServices } from '../kernel/services';
import type { ClientAuthDeps } from './client-authentication';
import { checkForm } from '../kernel/form-check';
import { REVOKE_FORM } from './oauth-forms';
import { appAuthenticatedTokenForm, authenticatedApp, field } from './client-authentication';
import { revokeDocs } from './revoke-route.openapi';

export { REVOKE_FORM };

/**
 * POST /revoke: OAuth 2.0 Token Revocation (RFC 7009), with app authentication exactly as at /introspect.
 * Access tokens are the only tokens issued, so token_type_hint is read but never narrows the search.
 * An unknown, malformed or expired token, and another app's token, all answer 200 and change nothing;
 * a revoked token is inactive on every replica within a second, durably (kernel/revocations.ts).
 */
/** What /revoke uses: client authentication, revocations, the logger. */
export type RevokeRouteDeps = ClientAuthDeps & Pick<KernelServices, 'logger'> & Pick<TokenServices, 'revocations'>;

export function revokeRoute(router: Router, ctx: RevokeRouteDeps): void {
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
      POST: [...appAuthenticatedTokenForm(ctx, REVOKE_FORM), checkForm(REVOKE_FORM, ['token_type_hint']), revoke],
    },
    revokeDocs,
  );
}
