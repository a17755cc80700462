import { AppError } from '@attest/common';
import { redirectUriProblem } from '../admin';
import type { RegisteredMetadata } from './registration-store';

/** RFC 7591 §3.2.2's errors: 400 with `error` and `error_description` (and our code, detail, attribute). */
export const registrationError = (
  error: 'invalid_redirect_uri' | 'invalid_client_metadata' | 'invalid_software_statement' | 'invalid_request',
  description: string,
  attribute: string | null,
): AppError => new AppError(error, 400, description, attribute, { extra: { error, error_description: description } });

const invalidMetadata = (field: string, problem: string) =>
  registrationError('invalid_client_metadata', `${field} ${problem}`, field);

export type AuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

/**
 * The grant and response types a registered client may have: the code flow (and refresh tokens), and the
 * device flow (RFC 8628: the app's device_authorization_grant is set from it).
 */
export const REGISTRABLE_GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'urn:ietf:params:oauth:grant-type:device_code',
];
const NAME_MAX = 200;
const URI_MAX = 2000;

function optionalString(body: Record<string, unknown>, field: string, max: number): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.trim() === '' || value.length > max)
    throw invalidMetadata(field, `must be a non-empty string of at most ${max} characters.`);
  return value.trim();
}

function stringList(body: Record<string, unknown>, field: string, fallback: string[]): string[] {
  const value = body[field];
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string'))
    throw invalidMetadata(field, 'must be a non-empty array of strings.');
  return [...new Set(value as string[])];
}

/** An https URL (a page about the client, its logo), as client_uri and logo_uri are. */
function httpsUri(body: Record<string, unknown>, field: string): string | undefined {
  const value = optionalString(body, field, URI_MAX);
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidMetadata(field, 'must be an absolute https URL.');
  }
  if (url.protocol !== 'https:') throw invalidMetadata(field, 'must be an absolute https URL.');
  return value;
}

/**
 * Client metadata (RFC 7591 §2) as a client registers it (POST /register, PUT of RFC 7592) or publishes it
 * (a Client ID Metadata Document): redirect URIs exact, https or http on a loopback host (RFC 8252 §7.3),
 * without fragment, at most 20; the code flow only (grant types authorization_code and refresh_token,
 * response type code); the token endpoint authentication methods `allowed`. Anything else is refused with
 * the RFC's error naming the field. Metadata we do not use is neither kept nor given back (§3.2.1).
 */
export function checkClientMetadata(input: unknown, allowed: AuthMethod[]): RegisteredMetadata {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw registrationError('invalid_client_metadata', 'The body must be a JSON object of client metadata.', null);
  const body = input as Record<string, unknown>;
  const redirectUris = body.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0)
    throw registrationError(
      'invalid_redirect_uri',
      'redirect_uris must be a non-empty array of URLs.',
      'redirect_uris',
    );
  if (redirectUris.length > 20)
    throw registrationError('invalid_redirect_uri', 'redirect_uris may hold at most 20 URLs.', 'redirect_uris');
  for (const uri of redirectUris) {
    const problem = typeof uri === 'string' && uri.length <= URI_MAX ? redirectUriProblem(uri) : 'must be a URL';
    if (problem)
      throw registrationError('invalid_redirect_uri', `redirect_uris ${problem}: ${String(uri)}`, 'redirect_uris');
  }
  const method = body.token_endpoint_auth_method ?? 'none';
  if (typeof method !== 'string' || !(allowed as string[]).includes(method))
    throw invalidMetadata(
      'token_endpoint_auth_method',
      `must be ${allowed.join(' or ')}${allowed.length === 1 ? ' (a public client: PKCE, no secret)' : ''}.`,
    );
  const grantTypes = stringList(body, 'grant_types', ['authorization_code']);
  const unknownGrant = grantTypes.find((g) => !REGISTRABLE_GRANT_TYPES.includes(g));
  if (unknownGrant)
    throw invalidMetadata('grant_types', `may hold only ${REGISTRABLE_GRANT_TYPES.join(', ')} (not ${unknownGrant}).`);
  if (!grantTypes.includes('authorization_code'))
    throw invalidMetadata('grant_types', 'must include authorization_code.');
  const responseTypes = stringList(body, 'response_types', ['code']);
  if (responseTypes.some((r) => r !== 'code')) throw invalidMetadata('response_types', 'may hold only code.');
  const scope = optionalString(body, 'scope', 1000);
  if (scope !== undefined && !/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/.test(scope))
    throw invalidMetadata('scope', 'must be scope values separated by single spaces.');
  const metadata: RegisteredMetadata = {
    redirect_uris: [...new Set(redirectUris as string[])],
    grant_types: grantTypes,
    response_types: responseTypes,
    token_endpoint_auth_method: method,
  };
  const extra = {
    client_name: optionalString(body, 'client_name', NAME_MAX),
    client_uri: httpsUri(body, 'client_uri'),
    logo_uri: httpsUri(body, 'logo_uri'),
    scope,
    software_id: optionalString(body, 'software_id', 200),
    software_version: optionalString(body, 'software_version', 100),
  };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) Object.assign(metadata, { [k]: v });
  return metadata;
}
