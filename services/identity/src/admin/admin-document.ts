import { DATE_TIME, NULLABLE_DATE_TIME, type ApiInfo, type JsonSchema } from '@attest/common';

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const strings: JsonSchema = { type: 'array', items: { type: 'string' } };

const APP_PROPERTIES: Record<string, JsonSchema> = {
  app_id: { type: 'string', pattern: '^app_[0-9a-f]{32}$' },
  name: { type: 'string' },
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
  web_origins: { ...strings, description: 'Origins whose pages may call /token (CORS)' },
  post_logout_redirect_uris: strings,
  backchannel_logout_uri: { type: ['string', 'null'] },
  dpop_bound_access_tokens: {
    type: 'boolean',
    description:
      'DPoP required (RFC 9449 §5.2): /token refuses a request without a DPoP proof, and every access token is DPoP-bound',
  },
  min_verification_level: {
    enum: ['orb', 'device', null],
    description:
      'The lowest verification level /authorize lets through (unmet_authentication_requirements below it); null: none',
  },
  profile: {
    enum: ['none', 'fapi2'],
    description:
      'fapi2: the FAPI 2.0 Security Profile (PAR, PKCE S256, response_type=code, DPoP, private_key_jwt, codes ' +
      'living at most 60 s, https redirect URIs or http on a loopback IP, a PS256 or ES256 id_token); none: each setting as set',
  },
  created_at: DATE_TIME,
  disabled: { type: 'boolean' },
  disabled_at: NULLABLE_DATE_TIME,
};

const USER_PROPERTIES: Record<string, JsonSchema> = {
  user_id: { type: 'string', pattern: '^usr_[0-9a-f]{32}$' },
  username: { type: 'string' },
  verification_level: { enum: ['orb', 'device'] },
  name: { type: ['string', 'null'] },
  given_name: { type: ['string', 'null'] },
  family_name: { type: ['string', 'null'] },
  created_at: DATE_TIME,
  disabled: { type: 'boolean' },
  disabled_at: NULLABLE_DATE_TIME,
};

const object = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  required,
  additionalProperties: false,
  properties,
});

/** The identity admin API's document: info and the shapes its operations answer with. */
export function identityAdminApi(): ApiInfo {
  return {
    title: 'Attest identity admin API',
    version: '1',
    description:
      'Apps and their teams, users, their sessions and consents, signing keys, the audit trail and admin tokens. ' +
      'Every /admin operation needs an admin token (Authorization: Bearer).',
    serverUrl: '/',
    components: {
      schemas: {
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
        User: object(USER_PROPERTIES),
        Member: object({
          app_id: { type: 'string' },
          user_id: { type: 'string' },
          username: { type: 'string' },
          role: { enum: ['owner', 'developer', 'viewer'] },
          added_at: DATE_TIME,
          added_by: { type: 'string', description: 'The operator, or the user_id of the owner who added them' },
        }),
        UserWithConsents: object({
          ...USER_PROPERTIES,
          consents: {
            type: 'array',
            items: object({ app_id: { type: 'string' }, scopes: strings, granted_at: DATE_TIME }),
          },
        }),
        Session: object({
          session_id: { type: 'string' },
          created_at: DATE_TIME,
          last_seen_at: DATE_TIME,
          expires_at: DATE_TIME,
          auth_time: { type: 'integer', description: 'Seconds since the epoch' },
          amr: { ...strings, description: 'RFC 8176 authentication methods, e.g. pwd' },
          device: { type: ['string', 'null'] },
          address: { type: ['string', 'null'] },
          app_ids: { ...strings, description: 'The apps signed in to through this session' },
        }),
        SigningKey: {
          type: 'object',
          required: ['kty', 'kid', 'alg', 'use', 'n', 'e', 'created_at', 'retired_at', 'unpublish_at', 'active'],
          description: 'The public JWK and its dates',
          properties: {
            kty: { const: 'RSA' },
            kid: { type: 'string' },
            alg: { const: 'RS256' },
            use: { const: 'sig' },
            n: { type: 'string' },
            e: { type: 'string' },
            created_at: DATE_TIME,
            retired_at: NULLABLE_DATE_TIME,
            unpublish_at: { ...NULLABLE_DATE_TIME, description: 'When it leaves the JWKS (its tokens expired)' },
            active: { type: 'boolean', description: 'The key new tokens are signed with' },
          },
        },
      },
    },
  };
}

export const identitySchemas = {
  app: ref('App'),
  newApp: ref('NewApp'),
  user: ref('User'),
  member: ref('Member'),
  userWithConsents: ref('UserWithConsents'),
  session: ref('Session'),
  signingKey: ref('SigningKey'),
};
