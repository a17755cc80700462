import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  DATE_TIME,
  documentAdminRoute,
  errorResponse,
  errors,
  jsonResponse,
  type JsonSchema,
  listPage,
  NULLABLE_DATE_TIME,
  operatorActor,
  pageOf,
  validate,
} from '@attest/common';
import type { App } from '../kernel/app-store';
import { object, ref, strings } from './admin-openapi';
import { disableEnableRoutes, lifecycleJson } from './admin-lifecycle';
import { appListQuery, createAppSchema, updateAppSchema } from './admin-schemas';
import {
  createApp,
  rotateAppSecret,
  securitySettingsJson,
  cibaSettingsJson,
  setAppDisabled,
  updateApp,
  type AppAdminDeps,
} from './app-operations';

const APP_PROPERTIES: Record<string, JsonSchema> = {
  app_id: {
    type: 'string',
    pattern: '^(app_[0-9a-f]{32}|https?://.+)$',
    description: 'app_ and 32 hexadecimal digits; a metadata document client’s is its document’s URL',
  },
  name: { type: 'string' },
  registration: {
    enum: ['operator', 'dynamic', 'metadata_document'],
    description:
      'Who made the app: operator (the admin API or the portal), or the client itself, not reviewed by the ' +
      'operator: dynamic (POST /register) or metadata_document (its client_id is the URL of its metadata)',
  },
  redirect_uris: strings,
  token_endpoint_auth_method: {
    enum: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    description:
      'none: a public client (single-page or native app), no secret, PKCE required; private_key_jwt: no secret, ' +
      'a client_assertion signed with a key of jwks or jwks_uri; client_secret_basic and client_secret_post: the ' +
      'secret, in the Basic header or the form (either is accepted)',
  },
  jwks: {
    type: ['object', 'null'],
    description: 'The app’s public keys (a JWK Set): client assertions and signed request objects',
  },
  jwks_uri: { type: ['string', 'null'], description: 'Where the app publishes its JWK Set (fetched, cached)' },
  require_pushed_authorization_requests: {
    type: 'boolean',
    description: 'Every authorization request must come through /par (RFC 9126)',
  },
  id_token_signed_response_alg: { enum: ['RS256', 'PS256', 'ES256'] },
  access_token_signed_response_alg: {
    enum: ['RS256', 'PS256', 'ES256'],
    description: 'The algorithm the app’s access tokens are signed with (PS256 or ES256 under the fapi2 profile)',
  },
  web_origins: { ...strings, description: 'Origins whose pages may call /token (CORS)' },
  post_logout_redirect_uris: strings,
  backchannel_logout_uri: { type: ['string', 'null'] },
  dpop_bound_access_tokens: {
    type: 'boolean',
    description:
      'DPoP required (RFC 9449 §5.2): /token refuses a request without a DPoP proof, and every access token is DPoP-bound',
  },
  may_act_for_users: {
    type: 'boolean',
    description:
      'The app (an agent) may exchange a person’s access token issued to another app for a short-lived token ' +
      'acting for that person (RFC 8693 token exchange)',
  },
  min_verification_level: {
    enum: ['orb', 'device', null],
    description:
      'The lowest verification level /authorize lets through (unmet_authentication_requirements below it); null: none',
  },
  device_authorization_grant: {
    type: 'boolean',
    description:
      'The app may use the Device Authorization Grant (RFC 8628): /device_authorization, then grant_type ' +
      'urn:ietf:params:oauth:grant-type:device_code at /token',
  },
  profile: {
    enum: ['none', 'fapi2'],
    description:
      'fapi2: the FAPI 2.0 Security Profile (PAR, PKCE S256, response_type=code, DPoP, private_key_jwt, codes ' +
      'living at most 60 s, https redirect URIs or http on a loopback IP, a PS256 or ES256 id_token); none: each setting as set',
  },
  backchannel_token_delivery_mode: {
    enum: ['poll', 'ping', null],
    description:
      'CIBA (POST /bc-authorize): poll, the app asks /token; ping, its notification endpoint is told first; null: no CIBA',
  },
  backchannel_client_notification_endpoint: {
    type: ['string', 'null'],
    description: 'CIBA ping mode: where {auth_req_id} is POSTed with the client_notification_token as a bearer token',
  },
  created_at: DATE_TIME,
  disabled: { type: 'boolean' },
  disabled_at: NULLABLE_DATE_TIME,
};

/** The admin document's schemas of apps. */
export const appSchemas: Record<string, JsonSchema> = {
  App: object(APP_PROPERTIES),
  NewApp: object(
    {
      ...APP_PROPERTIES,
      client_secret: {
        type: 'string',
        description: 'Shown once; absent for a public client (none) and a private_key_jwt app',
      },
    },
    Object.keys(APP_PROPERTIES),
  ),
};
const appSchema = ref('App');
const newAppSchema = ref('NewApp');

export const appJson = (app: App) => ({
  app_id: app.id,
  name: app.name,
  registration: app.registration,
  redirect_uris: app.redirectUris,
  token_endpoint_auth_method: app.tokenEndpointAuthMethod,
  web_origins: app.webOrigins,
  post_logout_redirect_uris: app.postLogoutRedirectUris,
  backchannel_logout_uri: app.backchannelLogoutUri,
  jwks: app.jwks,
  jwks_uri: app.jwksUri,
  ...securitySettingsJson(app),
  ...cibaSettingsJson(app),
  ...lifecycleJson(app),
});

const noApp = () => errors.notFound('No app with this app_id.', 'app_id');

const appParams = Joi.object({
  id: Joi.string().description(
    'The app_id (app_ and 32 hexadecimal digits), or a metadata document client’s URL (percent-encoded)',
  ),
});
const appNotFound = adminNotFoundResponse('no app with this app_id (attribute app_id)');
const tags = ['apps'];

/** Apps: create, list (paged), show, update, rotate the secret, disable and enable. */
export function appAdminRoutes(router: Router, deps: AppAdminDeps): void {
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
      201: jsonResponse('The app, with its client_secret (shown once)', newAppSchema),
      400: adminValidationResponse('name, redirect_uris, web_origins, …'),
    },
  });
  router.post('/apps', async (req, res) => {
    const { app, secret } = await createApp(deps, req.body, operatorActor(req, res));
    res.status(201).json({ ...appJson(app), ...(secret ? { client_secret: secret } : {}) });
  });

  documentAdminRoute(router, 'GET', '/apps', {
    summary: 'The apps, oldest first (paged)',
    tags,
    query: appListQuery,
    responses: {
      200: jsonResponse('A page of apps', pageOf('apps', appSchema)),
      400: adminValidationResponse('limit or cursor'),
    },
  });
  router.get('/apps', async (req, res) => {
    const q = validate(appListQuery, req.query);
    const apps = await deps.apps.list({ after: q.cursor, limit: q.limit + 1 });
    res.json(listPage('apps', apps, q.limit, appJson, (app) => app.id));
  });

  documentAdminRoute(router, 'GET', '/apps/:id', {
    summary: 'One app',
    tags,
    params: appParams,
    responses: { 200: jsonResponse('The app', appSchema), 404: appNotFound },
  });
  router.get('/apps/:id', async (req, res) => {
    const app = await deps.apps.find(req.params.id);
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
      200: jsonResponse('The app as changed (with client_secret when a new one was made)', newAppSchema),
      400: adminValidationResponse('a field, or invalid_parameter body when none is given'),
      404: appNotFound,
      409: errorResponse('public_client: a public client’s token_endpoint_auth_method cannot change'),
    },
  });
  router.patch('/apps/:id', async (req, res) => {
    const { app, secret } = await updateApp(deps, req.params.id, req.body, operatorActor(req, res));
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
    const secret = await rotateAppSecret(deps, req.params.id, operatorActor(req, res));
    res.json({ app_id: req.params.id, client_secret: secret });
  });

  disableEnableRoutes(
    router,
    '/apps/:id',
    (disabled) => ({
      summary: disabled ? 'Disable an app' : 'Enable a disabled app',
      description: disabled
        ? 'A disabled app gets no tokens, and its tokens go inactive. Its API keys and webhooks are the transactions ' +
          'service’s: POST /admin/apps/{app_id}/disable there stops them (`pnpm manage app disable` calls both).'
        : 'Its API keys and webhooks: POST /admin/apps/{app_id}/enable of the transactions service (`pnpm manage app enable` calls both).',
      tags,
      params: appParams,
      responses: { 200: jsonResponse('The app', appSchema), 404: appNotFound },
    }),
    async (req, res, disabled) => {
      res.json(appJson(await setAppDisabled(deps, String(req.params.id), disabled, operatorActor(req, res))));
    },
  );
}
