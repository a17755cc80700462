import type { Request, Response, Router } from 'express';
import { type AuditActor, endpoint, requestActor } from '@attest/common';
import type { KernelServices, TokenServices } from '../kernel/services';
import type { ClientAuthDeps } from './client-authentication';
import { checkForm } from '../kernel/form-check';
import { REVOKE_FORM } from './oauth-forms';
import { appAuthenticatedTokenForm, authenticatedApp, field } from './client-authentication';
import { revokeDocs } from './revoke-route.openapi';

export { REVOKE_FORM };

/**
 * POST /revoke: OAuth 2.0 Token Revocation (RFC 7009), with app authentication exactly as at /introspect.
 * An access token is revoked; a refresh token ends its whole family, the access tokens it gave included
 * (RFC 7009 §2.1). token_type_hint is read but never narrows the search. An unknown, malformed or expired
 * token, and another app's token, all answer 200 and change nothing; a revoked token is inactive on every
 * replica within a second, durably (kernel/revocations.ts).
 */
/** What /revoke uses: client authentication, revocations, the logger, the refresh tokens (bound in app.ts). */
export type RevokeRouteDeps = ClientAuthDeps &
  Pick<KernelServices, 'logger'> &
  Pick<TokenServices, 'revocations'> & {
    refreshTokens?: {
      revoke(token: string, app: { id: string }, actor: AuditActor): Promise<boolean>;
    };
  };

export function revokeRoute(router: Router, ctx: RevokeRouteDeps): void {
  const revoke = async (req: Request, res: Response) => {
    const token = field(req, 'token')!;
    const app = authenticatedApp(res);
    if (
      ctx.refreshTokens &&
      (await ctx.refreshTokens.revoke(token, app, { ...requestActor(req, 'anonymous', null), type: 'app', id: app.id }))
    ) {
      ctx.logger.info('refresh token family revoked', { app_id: app.id });
      return res.status(200).end();
    }
    const result = await ctx.tokens.verifyAccessToken(token);
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
        ...appAuthenticatedTokenForm(ctx, REVOKE_FORM, { allowPublic: true }),
        checkForm(REVOKE_FORM, ['token_type_hint']),
        revoke,
      ],
    },
    revokeDocs,
  );
}
