import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  pageOf,
  documentAdminRoute,
  errorResponse,
  errors,
  jsonResponse,
  operatorActor,
  outboundUrlProblem,
  validate,
} from '@attest/common';
import { hashClientSecret, newAppId, newClientSecret } from '../domain/ids';
import type { IdentityContext } from '../routes/context';
import { clientJwksProblem } from '../domain/client-keys';
import type { App, AppUpdate, ClientJwks, TokenEndpointAuthMethod } from '../store/app-store';
import type { VerificationLevel } from '../store/user-store';
import { identitySchemas } from './admin-document';
import { appListQuery, createAppSchema, updateAppSchema } from './admin-schemas';

type AppAdminContext = Pick<IdentityContext, 'apps' | 'audit' | 'config' | 'logger'>;

export const appJson = (app: App) => ({
  app_id: app.id,
  name: app.name,
  redirect_uris: app.redirectUris,
  token_endpoint_auth_method: app.tokenEndpointAuthMethod,
  web_origins: app.webOrigins,
  post_logout_redirect_uris: app.postLogoutRedirectUris,
  backchannel_logout_uri: app.backchannelLogoutUri,
  jwks: app.jwks,
  jwks_uri: app.jwksUri,
  require_pushed_authorization_requests: app.requirePushedAuthorizationRequests,
  id_token_signed_response_alg: app.idTokenSignedResponseAlg,
  dpop_bound_access_tokens: app.dpopBoundAccessTokens,
  min_verification_level: app.minVerificationLevel,
  created_at: app.createdAt.toISOString(),
  disabled: app.disabledAt !== null,
  disabled_at: app.disabledAt?.toISOString() ?? null,
});

const publicClientHasNoSecret = () =>
  errors.conflict(
    'public_client',
    'This app is a public client (token_endpoint_auth_method none): it has no secret.',
    'app_id',
  );

/** 'none' (or null) is no minimum. */
const minLevel = (value: string | null | undefined): VerificationLevel | null | undefined =>
  value === undefined ? undefined : value === null || value === 'none' ? null : (value as VerificationLevel);

const noApp = () => errors.notFound('No app with this app_id.', 'app_id');

/**
 * backchannel_logout_uri through the shared outbound guard, at registration: https (plain http only in
 * the embedded mode), and a host written as an IP address must be public unless
 * BACKCHANNEL_LOGOUT_ALLOW_PRIVATE allows it (a host name is checked, and pinned, at each delivery).
 */
function checkBackchannelUri(ctx: AppAdminContext, uri: string | null | undefined): void {
  const problem = uri ? outboundUrlProblem(uri, 'backchannel_logout_uri', ctx.config.outbound) : null;
  if (problem) throw errors.invalidParameter('backchannel_logout_uri', problem);
}

const SECRET_METHODS: TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/**
 * The app's keys: a JWK Set of public signature keys, or an https jwks_uri through the outbound guard
 * (a host name is checked, and pinned, at each fetch). A private_key_jwt app must have one of them.
 */
function checkKeys(
  ctx: AppAdminContext,
  method: TokenEndpointAuthMethod,
  keys: { jwks: ClientJwks | null | undefined; jwksUri: string | null | undefined },
): void {
  const problem =
    (keys.jwks ? clientJwksProblem(keys.jwks, 'jwks') : null) ??
    (keys.jwksUri ? outboundUrlProblem(keys.jwksUri, 'jwks_uri', ctx.config.outbound) : null);
  if (problem) throw errors.invalidParameter(keys.jwks ? 'jwks' : 'jwks_uri', problem);
  if (keys.jwks && keys.jwksUri) throw errors.invalidParameter('jwks', 'Give jwks or jwks_uri, not both.');
  if (method === 'private_key_jwt' && !keys.jwks && !keys.jwksUri)
    throw errors.invalidParameter('jwks', 'A private_key_jwt app needs its public keys: jwks or jwks_uri.');
}

const appParams = Joi.object({ id: Joi.string().description('The app_id (app_ and 32 hexadecimal digits)') });
const appNotFound = adminNotFoundResponse('no app with this app_id (attribute app_id)');
const tags = ['apps'];

/** Apps: create, list (paged), show, update, rotate the secret, disable and enable. */
export function appAdminRoutes(router: Router, ctx: AppAdminContext): void {
  const audit = (req: Request, res: Response, type: string, appId: string, detail?: Record<string, unknown>) =>
    ctx.audit.record({ type, actor: operatorActor(req, res), subject: appId, detail });

  documentAdminRoute(router, 'POST', '/apps', {
    summary: 'Create an app (an OpenID Connect client)',
    description:
      'token_endpoint_auth_method none makes a public client (no secret, PKCE required); otherwise the ' +
      'client_secret is in this answer only.',
    tags,
    body: { contentType: 'application/json', schema: createAppSchema },
    responses: {
      201: jsonResponse('The app, with its client_secret (shown once)', identitySchemas.newApp),
      400: adminValidationResponse('name, redirect_uris, web_origins, …'),
    },
  });
  router.post('/apps', async (req, res) => {
    const body = validate(createAppSchema, req.body);
    checkBackchannelUri(ctx, body.backchannel_logout_uri);
    const method = body.token_endpoint_auth_method as TokenEndpointAuthMethod;
    checkKeys(ctx, method, { jwks: body.jwks as ClientJwks | null | undefined, jwksUri: body.jwks_uri });
    const secret = SECRET_METHODS.includes(method) ? newClientSecret() : null;
    const app = await ctx.apps.insert({
      id: newAppId(),
      name: body.name,
      secretHash: secret && hashClientSecret(ctx.config.secret, secret),
      redirectUris: body.redirect_uris,
      webOrigins: body.web_origins,
      postLogoutRedirectUris: body.post_logout_redirect_uris,
      backchannelLogoutUri: body.backchannel_logout_uri,
      tokenEndpointAuthMethod: method,
      jwks: body.jwks as ClientJwks | null | undefined,
      jwksUri: body.jwks_uri,
      requirePushedAuthorizationRequests: body.require_pushed_authorization_requests,
      idTokenSignedResponseAlg: body.id_token_signed_response_alg,
      dpopBoundAccessTokens: body.dpop_bound_access_tokens,
      minVerificationLevel: minLevel(body.min_verification_level),
    });
    ctx.logger.info('app created', { app_id: app.id, public: app.public });
    await audit(req, res, 'app.created', app.id, {
      name: app.name,
      redirect_uris: app.redirectUris,
      post_logout_redirect_uris: app.postLogoutRedirectUris,
      backchannel_logout_uri: app.backchannelLogoutUri,
      token_endpoint_auth_method: app.tokenEndpointAuthMethod,
      jwks_uri: app.jwksUri,
      require_pushed_authorization_requests: app.requirePushedAuthorizationRequests,
      id_token_signed_response_alg: app.idTokenSignedResponseAlg,
      dpop_bound_access_tokens: app.dpopBoundAccessTokens,
      min_verification_level: app.minVerificationLevel,
    });
    res.status(201).json({ ...appJson(app), ...(secret ? { client_secret: secret } : {}) });
  });

  documentAdminRoute(router, 'GET', '/apps', {
    summary: 'The apps, oldest first (paged)',
    tags,
    query: appListQuery,
    responses: {
      200: jsonResponse('A page of apps', pageOf('apps', identitySchemas.app)),
      400: adminValidationResponse('limit or cursor'),
    },
  });
  router.get('/apps', async (req, res) => {
    const q = validate(appListQuery, req.query);
    const apps = await ctx.apps.list({ after: q.cursor, limit: q.limit + 1 });
    const page = apps.slice(0, q.limit);
    res.json({ apps: page.map(appJson), next_cursor: apps.length > q.limit ? page[page.length - 1].id : null });
  });

  documentAdminRoute(router, 'GET', '/apps/:id', {
    summary: 'One app',
    tags,
    params: appParams,
    responses: { 200: jsonResponse('The app', identitySchemas.app), 404: appNotFound },
  });
  router.get('/apps/:id', async (req, res) => {
    const app = await ctx.apps.find(req.params.id);
    if (!app) throw noApp();
    res.json(appJson(app));
  });

  documentAdminRoute(router, 'PATCH', '/apps/:id', {
    summary: 'Change an app',
    description:
      'Any of the fields; a list replaces the old one, null clears backchannel_logout_uri, jwks or jwks_uri. ' +
      'Changing token_endpoint_auth_method to private_key_jwt ends the client secret; changing it from ' +
      'private_key_jwt to client_secret_basic or client_secret_post makes a new one, shown once in this answer.',
    tags,
    params: appParams,
    body: { contentType: 'application/json', schema: updateAppSchema },
    responses: {
      200: jsonResponse('The app as changed (with client_secret when a new one was made)', identitySchemas.newApp),
      400: adminValidationResponse('a field, or invalid_parameter body when none is given'),
      404: appNotFound,
      409: errorResponse('public_client: a public client’s token_endpoint_auth_method cannot change'),
    },
  });
  router.patch('/apps/:id', async (req, res) => {
    const body = validate(updateAppSchema, req.body);
    checkBackchannelUri(ctx, body.backchannel_logout_uri);
    const changes: AppUpdate = {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.redirect_uris === undefined ? {} : { redirectUris: body.redirect_uris }),
      ...(body.web_origins === undefined ? {} : { webOrigins: body.web_origins }),
      ...(body.post_logout_redirect_uris === undefined
        ? {}
        : { postLogoutRedirectUris: body.post_logout_redirect_uris }),
      ...(body.backchannel_logout_uri === undefined ? {} : { backchannelLogoutUri: body.backchannel_logout_uri }),
      ...(body.jwks === undefined ? {} : { jwks: body.jwks as ClientJwks | null }),
      ...(body.jwks_uri === undefined ? {} : { jwksUri: body.jwks_uri }),
      ...(body.require_pushed_authorization_requests === undefined
        ? {}
        : { requirePushedAuthorizationRequests: body.require_pushed_authorization_requests }),
      ...(body.id_token_signed_response_alg === undefined
        ? {}
        : { idTokenSignedResponseAlg: body.id_token_signed_response_alg }),
      ...(body.dpop_bound_access_tokens === undefined ? {} : { dpopBoundAccessTokens: body.dpop_bound_access_tokens }),
      ...(body.min_verification_level === undefined
        ? {}
        : { minVerificationLevel: minLevel(body.min_verification_level) }),
    };
    let secret: string | null = null;
    const keySettings = body.jwks !== undefined || body.jwks_uri !== undefined;
    if (body.token_endpoint_auth_method !== undefined || keySettings) {
      // not a hot path: the settings are checked against the app as it is
      const current = await ctx.apps.find(req.params.id);
      if (!current) throw noApp();
      const method = (body.token_endpoint_auth_method ?? current.tokenEndpointAuthMethod) as TokenEndpointAuthMethod;
      if (current.public && body.token_endpoint_auth_method !== undefined) throw publicClientHasNoSecret();
      checkKeys(ctx, method, {
        jwks: body.jwks === undefined ? current.jwks : (body.jwks as ClientJwks | null),
        jwksUri: body.jwks_uri === undefined ? current.jwksUri : body.jwks_uri,
      });
      if (method !== current.tokenEndpointAuthMethod) {
        changes.tokenEndpointAuthMethod = method;
        if (method === 'private_key_jwt') changes.secretHash = null;
        else if (current.secretHash === null) {
          secret = newClientSecret();
          changes.secretHash = hashClientSecret(ctx.config.secret, secret);
        }
      }
    }
    const app = await ctx.apps.update(req.params.id, changes);
    if (!app) throw noApp();
    const { jwks: _jwks, ...detail } = body;
    await audit(req, res, 'app.updated', app.id, { changed: Object.keys(body), ...detail });
    res.json({ ...appJson(app), ...(secret ? { client_secret: secret } : {}) });
  });

  documentAdminRoute(router, 'POST', '/apps/:id/rotate-secret', {
    summary: 'A new client secret for an app; the old one stops working at once',
    tags,
    params: appParams,
    responses: {
      200: jsonResponse('The new secret, shown once', {
        type: 'object',
        required: ['app_id', 'client_secret'],
        additionalProperties: false,
        properties: { app_id: { type: 'string' }, client_secret: { type: 'string' } },
      }),
      404: appNotFound,
      409: errorResponse(
        'public_client: the app is a public client, it has no secret; private_key_jwt: the app authenticates with its keys',
      ),
    },
  });
  router.post('/apps/:id/rotate-secret', async (req, res) => {
    const current = await ctx.apps.find(req.params.id);
    if (current?.public) throw publicClientHasNoSecret();
    if (current?.tokenEndpointAuthMethod === 'private_key_jwt')
      throw errors.conflict(
        'private_key_jwt',
        'This app authenticates with private_key_jwt (its keys): it has no secret. Change token_endpoint_auth_method to get one.',
        'app_id',
      );
    const secret = newClientSecret();
    if (!(await ctx.apps.setSecretHash(req.params.id, hashClientSecret(ctx.config.secret, secret)))) throw noApp();
    ctx.logger.info('app secret rotated', { app_id: req.params.id });
    await audit(req, res, 'app.secret_rotated', req.params.id);
    res.json({ app_id: req.params.id, client_secret: secret });
  });

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    documentAdminRoute(router, 'POST', `/apps/:id/${action}`, {
      summary: disabled ? 'Disable an app' : 'Enable a disabled app',
      description: disabled
        ? 'A disabled app gets no tokens, and its tokens go inactive. Its API keys and webhooks are the transactions ' +
          'service’s: POST /admin/apps/{app_id}/disable there stops them (`pnpm manage app disable` calls both).'
        : 'Its API keys and webhooks: POST /admin/apps/{app_id}/enable of the transactions service (`pnpm manage app enable` calls both).',
      tags,
      params: appParams,
      responses: { 200: jsonResponse('The app', identitySchemas.app), 404: appNotFound },
    });
    router.post(`/apps/:id/${action}`, async (req, res) => {
      const app = await ctx.apps.setDisabled(req.params.id, disabled);
      if (!app) throw noApp();
      await audit(req, res, disabled ? 'app.disabled' : 'app.enabled', app.id);
      res.json(appJson(app));
    });
  }
}
