import type { Request, Response } from 'express';
import { AppError, sendJson, type AuditLog } from '@attest/common';
import type { App } from '../kernel/app-store';
import type { UserDirectory } from '../kernel/directories';
import type { TokenService } from '../kernel/tokens';
import { halfHash } from '../kernel/crypto';
import { grantField, tokenDpopJkt, userClaims, type TokenGrantDeps } from '../oauth';
import type { BackchannelRequests } from './backchannel-requests';

/** CIBA Core §10.1: the grant type of a backchannel authentication request's token request. */
export const CIBA_GRANT_TYPE = 'urn:openid:params:grant-type:ciba';

/** What grant_type=urn:openid:params:grant-type:ciba at /token uses. */
export interface CibaGrantDeps extends TokenGrantDeps {
  config: { issuer: string; emailDomain: string };
  tokens: Pick<TokenService, 'accessToken' | 'idToken' | 'accessTokenTtl'>;
  users: Pick<UserDirectory, 'findById'>;
  ciba: Pick<BackchannelRequests, 'redeem'>;
  audit: Pick<AuditLog, 'record'>;
}

/**
 * POST /token grant_type=urn:openid:params:grant-type:ciba (CIBA Core §10.1, §11): the app's auth_req_id,
 * redeemed once when the person approved it. Until then authorization_pending (slow_down when polled
 * faster than the interval), access_denied once denied, expired_token once expired, invalid_grant for
 * another app's id or one already used. The tokens carry the approved authorization_details, the acr, and
 * the approval's time as auth_time (the person's fresh proof).
 */
export function cibaGrant(deps: CibaGrantDeps) {
  return async (req: Request, res: Response) => {
    const app = res.locals.app as App;
    if (!app.backchannelTokenDeliveryMode)
      throw new AppError('unauthorized_client', 400, 'This app is not registered for CIBA.', 'grant_type');
    const authReqId = grantField(req, 'auth_req_id');
    if (!authReqId) throw new AppError('invalid_request', 400, 'auth_req_id is required.', 'auth_req_id');
    if (!/^[0-9a-f]{64}$/.test(authReqId))
      throw new AppError(
        'invalid_grant',
        400,
        'auth_req_id names no backchannel authentication request.',
        'auth_req_id',
      );
    const jkt = await tokenDpopJkt(deps, req, res, app);
    const approved = await deps.ciba.redeem(authReqId, app.id);
    const user = await deps.users.findById(approved.userId);
    if (!user || user.disabledAt)
      throw new AppError(
        'invalid_grant',
        400,
        'The person of this request no longer exists or is disabled.',
        'auth_req_id',
      );
    const authTime = Math.floor(approved.decidedAt!.getTime() / 1000);
    const signIn = { acr: approved.acr!, amr: approved.amr ?? undefined, authTime };
    const details = approved.authorizationDetails ?? undefined;
    const { token, claims } = await deps.tokens.accessToken({
      sub: approved.sub,
      clientId: app.id,
      scopes: approved.scopes,
      signIn,
      ...(jkt ? { jkt } : {}),
      ...(details ? { authorizationDetails: details } : {}),
      alg: app.accessTokenSignedResponseAlg,
    });
    const idToken = await deps.tokens.idToken(
      {
        ...userClaims(deps.config.issuer, deps.config.emailDomain, approved.sub, user, approved.scopes),
        sub: approved.sub,
        aud: app.id,
        auth_time: authTime,
        acr: signIn.acr,
        ...(signIn.amr ? { amr: signIn.amr } : {}),
        at_hash: halfHash(token),
        ...(details ? { authorization_details: details } : {}),
      },
      app.idTokenSignedResponseAlg,
    );
    await deps.audit.record({
      type: 'ciba.redeemed',
      actor: { type: 'app', id: app.id },
      subject: approved.userId,
      detail: { request_id: approved.id, token_id: claims.jti },
    });
    sendJson(res, {
      access_token: token,
      token_type: jkt ? 'DPoP' : 'Bearer',
      expires_in: deps.tokens.accessTokenTtl,
      scope: claims.scope,
      id_token: idToken,
      ...(details ? { authorization_details: details } : {}),
    });
  };
}
