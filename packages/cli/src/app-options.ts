import { readFileSync } from 'node:fs';
import { CliError } from './admin-client';
import { nullable, str, type Values } from './command';

/** RP-Initiated and Back-Channel Logout registration. */
export const logoutOptions = {
  'post-logout-redirect-uri': {
    type: 'string',
    multiple: true,
    value: 'URI',
    description: 'where sign-out may return to (exact match); repeat for more',
  },
  'backchannel-logout-uri': {
    type: 'string',
    value: 'URI',
    description: "where a logout_token is POSTed when a user's session ends ('' clears it on update)",
  },
} as const;

/** High-assurance settings (issue 24): key-based authentication, pushed requests, the id_token algorithm. */
export const assuranceOptions = {
  'auth-method': {
    type: 'string',
    value: 'METHOD',
    description:
      'how the app authenticates: client_secret_basic (default), client_secret_post or private_key_jwt (needs --jwks-file or --jwks-uri)',
  },
  'jwks-file': {
    type: 'string',
    value: 'FILE',
    description:
      "a JSON file with the app's public keys (a JWK Set) for private_key_jwt and signed requests ('' clears on update)",
  },
  'jwks-uri': {
    type: 'string',
    value: 'URI',
    description: "where the app publishes its public keys, https ('' clears on update)",
  },
  'require-par': { type: 'boolean', description: 'every sign-in of the app must be pushed to /par first (RFC 9126)' },
  'no-require-par': { type: 'boolean', description: 'sign-ins need not be pushed (update)' },
  'id-token-alg': {
    type: 'string',
    value: 'ALG',
    description: "the id_token's signing algorithm: RS256 (default), PS256 or ES256",
  },
  'access-token-alg': {
    type: 'string',
    value: 'ALG',
    description:
      "the access tokens' signing algorithm: RS256 (default), PS256 or ES256; under fapi2 PS256 (its default) or ES256",
  },
  profile: {
    type: 'string',
    value: 'fapi2|none',
    description:
      'fapi2: the FAPI 2.0 profile (PAR, PKCE S256, code flow only, DPoP, private_key_jwt with --jwks-file or ' +
      '--jwks-uri, codes living 60 s at most, https redirect URIs or http on 127.0.0.1/[::1], PS256 or ES256 ' +
      'id_tokens); none (the default) lifts it, each setting staying as it is',
  },
} as const;

function jwksOf(values: Values): unknown {
  const file = values['jwks-file'];
  if (file === undefined) return undefined;
  if (file === '') return null;
  try {
    return JSON.parse(readFileSync(file as string, 'utf8')) as unknown;
  } catch (err) {
    throw new CliError(`--jwks-file ${String(file)}: ${(err as Error).message}`);
  }
}

/** The admin API fields of the high-assurance options given (absent ones stay out). */
export function assuranceFields(values: Values): Record<string, unknown> {
  if (values['require-par'] && values['no-require-par'])
    throw new CliError('Give --require-par or --no-require-par, not both.');
  const fields: Record<string, unknown> = {
    token_endpoint_auth_method: str(values, 'auth-method'),
    jwks: jwksOf(values),
    jwks_uri: nullable(values, 'jwks-uri'),
    require_pushed_authorization_requests: values['require-par'] ? true : values['no-require-par'] ? false : undefined,
    id_token_signed_response_alg: str(values, 'id-token-alg'),
    access_token_signed_response_alg: str(values, 'access-token-alg'),
    profile: str(values, 'profile'),
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

export const levelOption = {
  'min-verification-level': {
    type: 'string',
    value: 'orb|device|none',
    description: 'sign-in refuses people below this level (unmet_authentication_requirements); none: no minimum',
  },
} as const;

/** CIBA (issue 42): approval of one action by the person, POST /bc-authorize. */
export const cibaOptions = {
  'ciba-mode': {
    type: 'string',
    value: 'poll|ping',
    description:
      "CIBA (POST /bc-authorize): poll, the app asks /token until the person decided; ping, its --ciba-notification-endpoint is told first ('' turns CIBA off on update, and clears the endpoint)",
  },
  'ciba-notification-endpoint': {
    type: 'string',
    value: 'URL',
    description:
      "CIBA ping mode: where {auth_req_id} is POSTed with the request's client_notification_token; https (plain http only on loopback, in the embedded development mode) ('' clears on update)",
  },
} as const;

/** The admin API fields of the CIBA options given (absent ones stay out). */
export function cibaFields(values: Values): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    backchannel_token_delivery_mode: nullable(values, 'ciba-mode'),
    backchannel_client_notification_endpoint: nullable(values, 'ciba-notification-endpoint'),
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}
