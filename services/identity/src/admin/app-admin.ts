import type { Router } from 'express';
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
  validate,
} from '@attest/common';
import type { App } from '../store/app-store';
import { identitySchemas } from './admin-document';
import { appListQuery, createAppSchema, updateAppSchema } from './admin-schemas';
import { createApp, rotateAppSecret, setAppDisabled, updateApp, type AppAdminContext } from './app-operations';

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
  profile: app.profile,
  created_at: app.createdAt.toISOString(),
  disabled: app.disabledAt !== null,
  disabled_at: app.disabledAt?.toISOString() ?? null,
});

const noApp = () => errors.notFound('No app with this app_id.', 'app_id');

const appParams = Joi.object({ id: Joi.string().description('The app_id (app_ and 32 hexadecimal digits)') });
const appNotFound = adminNotFoundResponse('no app with this app_id (attribute app_id)');
const tags = ['apps'];

/** Apps: create, list (paged), show, update, rotate the secret, disable and enable. */
export function appAdminRoutes(router: Router, ctx: AppAdminContext): void {
  documentAdminRoute(router, 'POST', '/apps', {
    summary: 'Create an app (an OpenID Connect client)',
    description:
      'token_endpoint_auth_method none makes a public client (no secret, PKCE required); otherwise the ' +
      'client_secret is in this answer only. profile fapi2 (FAPI 2.0) sets the settings it requires that are not ' +
      'given (private_key_jwt, which needs jwks or jwks_uri; PAR and DPoP required; a PS256 id_token) and refuses ' +
      'one given against it, and an http redirect URI other than 127.0.0.1 or [::1] (400 invalid_parameter naming the field).',
    tags,
    body: { contentType: 'application/json', schema: createAppSchema },
    responses: {
      201: jsonResponse('The app, with its client_secret (shown once)', identitySchemas.newApp),
      400: adminValidationResponse('name, redirect_uris, web_origins, …'),
    },
  });
  router.post('/apps', async (req, res) => {
    const { app, secret } = await createApp(ctx, req.body, operatorActor(req, res));
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
      'private_key_jwt to client_secret_basic or client_secret_post makes a new one, shown once in this answer. ' +
      'profile fapi2 sets what it requires as on creation (a client secret ends: the app needs its keys); under ' +
      'it, a setting loosened is refused (400 invalid_parameter naming it) until profile is set back to none, ' +
      'which keeps each setting as it is.',
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
    const { app, secret } = await updateApp(ctx, req.params.id, req.body, operatorActor(req, res));
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
    const secret = await rotateAppSecret(ctx, req.params.id, operatorActor(req, res));
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
      res.json(appJson(await setAppDisabled(ctx, req.params.id, disabled, operatorActor(req, res))));
    });
  }
}
