import Joi from 'joi';
import {
  emptyResponse,
  errorResponse,
  jsonResponse,
  tooManyRequestsResponse,
  type EndpointDocs,
  type JsonSchema,
} from '@attest/common';
import { CORS_PREFLIGHT } from '../oauth';

// OpenAPI fragments of /register (RFC 7591) and /register/{client_id} (RFC 7592): served as the routes register them.

const strings: JsonSchema = { type: 'array', items: { type: 'string' } };

const METADATA: Record<string, JsonSchema> = {
  redirect_uris: { ...strings, description: 'Exact; https, or http on localhost, 127.0.0.1 or [::1] (RFC 8252)' },
  token_endpoint_auth_method: {
    enum: ['none', 'client_secret_basic', 'client_secret_post'],
    description: 'none (default): a public client with PKCE; the others only with CLIENT_REGISTRATION=token',
  },
  grant_types: {
    type: 'array',
    items: { enum: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'] },
    description:
      'urn:ietf:params:oauth:grant-type:device_code: the client may use the device flow (RFC 8628); a client ' +
      'registering itself without an initial access token only under CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW=true',
  },
  response_types: { type: 'array', items: { enum: ['code'] } },
  client_name: { type: 'string', maxLength: 200 },
  client_uri: { type: 'string' },
  logo_uri: { type: 'string' },
  scope: { type: 'string' },
  software_id: { type: 'string' },
  software_version: { type: 'string' },
};

const REQUEST: JsonSchema = {
  type: 'object',
  required: ['redirect_uris'],
  properties: { ...METADATA, client_id: { type: 'string', description: 'RFC 7592 updates: this client’s id' } },
};

const CLIENT_INFORMATION: JsonSchema = {
  type: 'object',
  required: [
    'client_id',
    'client_id_issued_at',
    'redirect_uris',
    'grant_types',
    'response_types',
    'token_endpoint_auth_method',
    'registration_client_uri',
  ],
  additionalProperties: false,
  properties: {
    client_id: { type: 'string', pattern: '^app_[0-9a-f]{32}$' },
    client_id_issued_at: { type: 'integer' },
    client_secret: { type: 'string', description: 'Confidential clients: shown once, at registration' },
    client_secret_expires_at: { type: 'integer', enum: [0] },
    registration_access_token: {
      type: 'string',
      description: 'RFC 7592: the Bearer token of registration_client_uri; shown once, at registration',
    },
    registration_client_uri: { type: 'string' },
    ...METADATA,
  },
};

const NO_STORE = {
  'Cache-Control': { description: 'no-store', schema: { type: 'string' } },
};

const registrationErrors = errorResponse(
  'RFC 7591 §3.2.2 (OAuth error / error_description): invalid_redirect_uri, invalid_client_metadata ' +
    '(naming the field), invalid_request; invalid_content_type (not application/json), invalid_body',
);
const bearer = [{ bearer: [] }];
const tags = ['registration'];

export const registerDocs = {
  POST: {
    summary: 'Register a client (RFC 7591 Dynamic Client Registration)',
    description:
      'CLIENT_REGISTRATION open: public clients only (token_endpoint_auth_method none, PKCE), so many per address ' +
      '(REGISTRATIONS_PER_ADDRESS), deleted when nobody signed in to them within REGISTRATION_UNUSED_HOURS. token: ' +
      'an initial access token (Authorization: Bearer, `pnpm manage registration-token create`); confidential ' +
      'clients too. off: 404. The client is an app marked as self-registered (registration dynamic).',
    tags,
    security: [...bearer, {}],
    body: { contentType: 'application/json', schema: REQUEST },
    responses: {
      201: jsonResponse(
        'The client: its client_id, and (shown once) registration_access_token and client_secret',
        CLIENT_INFORMATION,
        NO_STORE,
      ),
      400: registrationErrors,
      401: errorResponse('invalid_token: CLIENT_REGISTRATION=token and no usable initial access token'),
      404: errorResponse('not_found: registration is off (CLIENT_REGISTRATION=off)'),
      413: errorResponse('payload_too_large'),
      429: tooManyRequestsResponse('registrations from this address (CLIENT_REGISTRATION=open)'),
    },
  },
  OPTIONS: CORS_PREFLIGHT,
} satisfies EndpointDocs;

const params = Joi.object({ client_id: Joi.string().description('The client_id /register gave') });
const unauthorized = errorResponse(
  'invalid_token: no such client, or not its registration access token (WWW-Authenticate: Bearer)',
);

export const registrationClientDocs = {
  GET: {
    summary: 'Read a registration (RFC 7592 §2.1)',
    tags,
    security: bearer,
    params,
    responses: { 200: jsonResponse('The client as registered', CLIENT_INFORMATION, NO_STORE), 401: unauthorized },
  },
  PUT: {
    summary: 'Replace a registration’s metadata (RFC 7592 §2.2)',
    description:
      'The whole metadata, with client_id; omitted fields are cleared. token_endpoint_auth_method and the secret ' +
      'do not change; registration_access_token, registration_client_uri, client_secret and the *_at fields must not be sent.',
    tags,
    security: bearer,
    params,
    body: { contentType: 'application/json', schema: REQUEST },
    responses: {
      200: jsonResponse('The client as registered now', CLIENT_INFORMATION, NO_STORE),
      400: registrationErrors,
      401: unauthorized,
      413: errorResponse('payload_too_large'),
    },
  },
  DELETE: {
    summary: 'Delete a registration (RFC 7592 §2.3): the client, its consents and its tokens end',
    tags,
    security: bearer,
    params,
    responses: { 204: emptyResponse('Deleted'), 401: unauthorized },
  },
} satisfies EndpointDocs;
