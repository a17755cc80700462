import type { Request, Response, Router } from 'express';
import { AppError, endpoint, sendJson } from '@attest/common';
import { ACR_VALUES_SUPPORTED, acrOf, authenticateApp, authenticatedApp, field, parseForm, satisfies } from '../oauth';
import { oauthJsonErrors, type ClientAuthDeps } from '../oauth';
import type { KernelServices } from '../kernel/services';
import { SUPPORTED_SCOPES } from '../kernel/scopes';
import { refuseBlockedClient } from '../kernel/failure-limits';
import { noStore, requireFormContentType } from '../kernel/http-steps';
import { HIDDEN_CHARACTERS, parseAuthorizationDetails } from './authorization-details';
import {
  DEFAULT_EXPIRY_SECONDS,
  MAX_EXPIRY_SECONDS,
  MIN_EXPIRY_SECONDS,
  type BackchannelRequests,
} from './backchannel-requests';
import { bcAuthorizeDocs } from './bc-authorize-route.openapi';
import type { LoginHintTokens } from './login-hint-tokens';

/** The longest binding_message shown to the person (CIBA Core §7.1: short, shown on both devices). */
export const MAX_BINDING_MESSAGE = 100;
const MAX_NOTIFICATION_TOKEN = 1024;

/** Our codes as CIBA Core §13 names them; any other client error is invalid_request. */
const OAUTH_ERROR: Record<string, string> = {
  unauthenticated: 'invalid_client',
  too_many_requests: 'temporarily_unavailable',
  invalid_scope: 'invalid_scope',
  unknown_user_id: 'unknown_user_id',
  unauthorized_client: 'unauthorized_client',
  invalid_binding_message: 'invalid_binding_message',
  expired_login_hint_token: 'expired_login_hint_token',
  access_denied: 'access_denied',
  invalid_authorization_details: 'invalid_authorization_details',
};

/** Why a login_hint_token is refused (LoginHintTokens.check), as CIBA Core §13 answers it. */
const HINT_REFUSED: Record<'expired' | 'ended' | 'invalid', [string, number, string]> = {
  expired: [
    'expired_login_hint_token',
    400,
    'login_hint_token has expired: the person can make a new one on their account page.',
  ],
  // the agent it was made for no longer acts for the person (ended since)
  ended: [
    'access_denied',
    403,
    'The person ended this app under “Agents acting for you” after making this login_hint_token.',
  ],
  invalid: [
    'invalid_request',
    400,
    'login_hint_token must be a login hint token the person made for this app on their account page.',
  ],
};

const invalidRequest = (detail: string, attribute: string | null = null) =>
  new AppError('invalid_request', 400, detail, attribute);

/** What POST /bc-authorize uses: client authentication, the person's pairwise subjects, the requests. */
export type BcAuthorizeRouteDeps = ClientAuthDeps &
  Pick<KernelServices, 'subjects' | 'users'> & {
    ciba: Pick<BackchannelRequests, 'create'>;
    hints: Pick<LoginHintTokens, 'check'>;
  };

/**
 * POST /bc-authorize (CIBA Core 1.0 §7): an authenticated app whose CIBA mode is set asks the person named by
 * login_hint (their pairwise sub for this app), id_token_hint or login_hint_token (one the person made for this
 * app on the account page) to approve one action: scope (openid required),
 * binding_message, acr_values, requested_expiry, RFC 9396 authorization_details, and in ping mode
 * client_notification_token. The answer: auth_req_id, expires_in, interval.
 */
export function bcAuthorizeRoute(router: Router, ctx: BcAuthorizeRouteDeps): void {
  /** The person the request names: exactly one of login_hint, id_token_hint and login_hint_token. */
  const person = async (req: Request, appId: string): Promise<{ userId: string; sub: string }> => {
    const loginHint = field(req, 'login_hint');
    const idTokenHint = field(req, 'id_token_hint');
    const loginHintToken = field(req, 'login_hint_token');
    if ([loginHint, idTokenHint, loginHintToken].filter((h) => h !== undefined).length !== 1)
      throw invalidRequest(
        'Give exactly one of login_hint (the person’s sub for this app), id_token_hint and login_hint_token.',
        'login_hint',
      );
    let sub = loginHint;
    if (idTokenHint !== undefined) {
      const claims = await ctx.tokens.verifyIdTokenHint(idTokenHint);
      if (!claims || claims.aud !== appId)
        throw invalidRequest('id_token_hint must be an id_token this server issued to this app.', 'id_token_hint');
      sub = claims.sub;
    }
    // a hint the person made names them by their account, sealed; the others by their sub for this app
    let hinted: string | undefined;
    if (loginHintToken !== undefined) {
      const checked = await ctx.hints.check(loginHintToken, appId);
      if (!checked.ok) {
        const [code, status, detail] = HINT_REFUSED[checked.reason];
        throw new AppError(code, status, detail, 'login_hint_token');
      }
      sub = checked.sub;
      hinted = checked.userId;
    }
    const userId = hinted ?? (sub!.length <= 200 ? await ctx.subjects.userIdFor(appId, sub!) : null);
    const user = userId ? await ctx.users.findById(userId) : null;
    if (!user || user.disabledAt)
      throw new AppError(
        'unknown_user_id',
        400,
        'login_hint names nobody this app knows: give the sub of an id_token this app received.',
        loginHintToken !== undefined ? 'login_hint_token' : idTokenHint !== undefined ? 'id_token_hint' : 'login_hint',
      );
    // the tokens an approval gives carry the sub, which the app's /userinfo and /introspect look up
    if (hinted) await ctx.subjects.remember(appId, sub!, user.id);
    const acrValues = (field(req, 'acr_values') ?? '').split(' ').filter(Boolean);
    const unknownAcr = acrValues.find((acr) => !ACR_VALUES_SUPPORTED.includes(acr));
    if (unknownAcr !== undefined)
      throw invalidRequest(`acr_values: ${unknownAcr} is not one of ${ACR_VALUES_SUPPORTED.join(', ')}.`, 'acr_values');
    if (acrValues.length && !acrValues.some((acr) => satisfies(user.verificationLevel, acr)))
      throw new AppError(
        'access_denied',
        403,
        `The person is verified at ${acrOf(user.verificationLevel)}, which meets none of acr_values.`,
        'acr_values',
      );
    return { userId: user.id, sub: sub! };
  };

  const request = async (req: Request, res: Response) => {
    const app = authenticatedApp(res);
    const mode = app.backchannelTokenDeliveryMode;
    if (!mode)
      throw new AppError(
        'unauthorized_client',
        400,
        'This app is not registered for CIBA (pnpm manage app update --ciba-mode poll|ping).',
        'client_id',
      );
    if (field(req, 'request') !== undefined)
      throw invalidRequest(
        'Signed authentication requests (request) are not supported: send the parameters.',
        'request',
      );
    const scopes = [...new Set((field(req, 'scope') ?? '').split(' ').filter(Boolean))];
    if (!scopes.includes('openid')) throw invalidRequest('scope must include openid (CIBA Core §7.1).', 'scope');
    const unknownScope = scopes.find((s) => !(SUPPORTED_SCOPES as readonly string[]).includes(s));
    if (unknownScope !== undefined)
      throw new AppError(
        'invalid_scope',
        400,
        `The scope ${unknownScope} is not offered here (offered: ${SUPPORTED_SCOPES.join(' ')}).`,
        'scope',
      );
    const bindingMessage = field(req, 'binding_message') ?? null;
    if (
      bindingMessage !== null &&
      (bindingMessage.length > MAX_BINDING_MESSAGE ||
        HIDDEN_CHARACTERS.test(bindingMessage) ||
        bindingMessage.trim() === '')
    )
      throw new AppError(
        'invalid_binding_message',
        400,
        `binding_message must be 1 to ${MAX_BINDING_MESSAGE} printable characters, not only spaces (no control, ` +
          'format or invisible characters: it is compared by eye on two screens).',
        'binding_message',
      );
    const requested = field(req, 'requested_expiry');
    if (
      requested !== undefined &&
      (!/^[0-9]{1,6}$/.test(requested) || +requested < MIN_EXPIRY_SECONDS || +requested > MAX_EXPIRY_SECONDS)
    )
      throw invalidRequest(
        `requested_expiry must be a whole number of seconds from ${MIN_EXPIRY_SECONDS} to ${MAX_EXPIRY_SECONDS}.`,
        'requested_expiry',
      );
    const details = field(req, 'authorization_details');
    // form-style nesting (authorization_details[0][type]=…) is no RFC 9396 request: never a plain sign-in instead
    if (details === undefined && Object.keys(req.body as object).some((k) => /^authorization_details[[.]/.test(k)))
      throw new AppError(
        'invalid_authorization_details',
        400,
        'authorization_details must be one form field holding a JSON array (RFC 9396 §2), not fields such as ' +
          'authorization_details[0][type].',
        'authorization_details',
      );
    const authorizationDetails = details === undefined ? null : parseAuthorizationDetails(details);
    const notificationToken = field(req, 'client_notification_token') ?? null;
    if (mode === 'ping' && notificationToken === null)
      throw invalidRequest(
        'A ping mode app must send client_notification_token (CIBA Core §7.1).',
        'client_notification_token',
      );
    if (notificationToken !== null && notificationToken.length > MAX_NOTIFICATION_TOKEN)
      throw invalidRequest(
        `client_notification_token must be at most ${MAX_NOTIFICATION_TOKEN} characters.`,
        'client_notification_token',
      );
    const { userId, sub } = await person(req, app.id);
    const created = await ctx.ciba.create({
      app,
      userId,
      sub,
      scopes,
      bindingMessage,
      acrValues: (field(req, 'acr_values') ?? '').split(' ').filter(Boolean),
      authorizationDetails,
      expiresIn: requested === undefined ? DEFAULT_EXPIRY_SECONDS : +requested,
      notificationToken,
    });
    sendJson(res, { auth_req_id: created.authReqId, expires_in: created.expiresIn, interval: created.interval });
  };

  endpoint(
    router,
    '/bc-authorize',
    {
      POST: [
        noStore,
        requireFormContentType,
        parseForm(ctx.config.BODY_LIMIT),
        refuseBlockedClient(ctx.limits),
        authenticateApp(ctx, { allowPost: true, allowPublic: false }),
        request,
      ],
    },
    bcAuthorizeDocs,
  );
  router.use('/bc-authorize', oauthJsonErrors(OAUTH_ERROR));
}
