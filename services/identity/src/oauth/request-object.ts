import { AppError, type Cache } from '@attest/common';
import type { App } from '../kernel/app-store';
import { sha256 } from '../kernel/crypto';
import { fapi2AlgorithmProblem } from '../kernel/app-profile';
import type { Params } from './authorization-request';
import type { ClientKeys } from './client-keys';
import { CLOCK_TOLERANCE_SECONDS, clientJwtProblem, decodeClientJwt } from './client-jwt';

/** FAPI 2.0 Message Signing §5.3.1: a request object lives at most 60 minutes after its nbf (or iat). */
export const REQUEST_OBJECT_MAX_LIFETIME_SECONDS = 3600;

/** The JWT claims of a request object that are not authorization request parameters. */
const JWT_CLAIMS = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti']);

export const invalidRequestObject = (problem: string) =>
  new AppError('invalid_request_object', 400, `The request object is invalid: ${problem}`, 'request');

/**
 * JAR (RFC 9101): the parameters of a request object: unsigned (alg none) from an app outside the fapi2
 * profile (openUnsigned), or signed with one of the app's keys (RS256, PS256 or ES256), iss = its client_id, aud = our issuer, exp required and at most
 * REQUEST_OBJECT_MAX_LIFETIME_SECONDS after nbf (or iat, or now when neither is given), nbf checked, and a
 * jti never seen before within its lifetime: remembered in the shared cache until exp, so no replica
 * accepts the object again (issue 40, item 7). Only the object's parameters are used (§6.3): the caller
 * ignores everything sent beside it but client_id. A claim that is not a string (max_age as a number,
 * claims as an object) becomes its JSON text.
 */
export async function openRequestObject(
  keys: ClientKeys,
  cache: Pick<Cache, 'setIfAbsent'>,
  app: App,
  token: string,
  expect: { issuer: string; nowSeconds: number },
): Promise<Params> {
  if (unsignedAlg(token)) return openUnsigned(app, token);
  const decoded = decodeClientJwt(token);
  if (!decoded) throw invalidRequestObject('it must be a JWT signed with RS256, PS256 or ES256.');
  const key = await keys.key(app, decoded.kid, decoded.alg);
  const problem =
    fapi2AlgorithmProblem(app.profile, decoded.alg, 'its request objects') ??
    clientJwtProblem(decoded, key, {
      issuer: app.id,
      audiences: [expect.issuer],
      nowSeconds: expect.nowSeconds,
    });
  if (problem) throw invalidRequestObject(problem);
  const { payload } = decoded;
  const { exp, nbf, iat, jti } = payload as { exp: number; nbf?: unknown; iat?: unknown; jti?: unknown };
  const from = typeof nbf === 'number' ? nbf : typeof iat === 'number' ? iat : expect.nowSeconds;
  if (exp - from > REQUEST_OBJECT_MAX_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS)
    throw invalidRequestObject(
      `exp must be at most ${REQUEST_OBJECT_MAX_LIFETIME_SECONDS / 60} minutes after nbf (or iat, or now when neither is given).`,
    );
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256)
    throw invalidRequestObject('jti is required (at most 256 characters): a request object is used once.');
  const params = parametersOf(app, payload);
  const ttlMs = (Math.max(exp - expect.nowSeconds, 0) + CLOCK_TOLERANCE_SECONDS + 60) * 1000;
  if (!(await cache.setIfAbsent(`request-object:${sha256(`${app.id}:${jti}`)}`, '1', ttlMs)))
    throw invalidRequestObject('this jti was used before: a request object is used once.');
  return params;
}

/** Whether the JWT's header says alg none (an unsecured JWT, RFC 7519 §6). */
function unsignedAlg(token: string): boolean {
  const dot = token.indexOf('.');
  if (dot <= 0) return false;
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && (header as { alg?: unknown }).alg === 'none';
  } catch {
    return false;
  }
}

/**
 * An unsigned request object (alg none; OpenID Connect Core §6.1, issue 40 item 3): it carries no more
 * trust than the same parameters in the query, so it is taken as they would be, from an app that does
 * not have to sign its requests. A fapi2 app does (FAPI 2.0 §5.4): refused. Its claims are not checked
 * (exp, jti: anyone can make another), its signature part must be empty.
 */
function openUnsigned(app: App, token: string): Params {
  if (app.profile === 'fapi2')
    throw invalidRequestObject('this app (FAPI 2.0 profile) must sign its request objects: alg none is refused.');
  const parts = token.split('.');
  const payload = parts.length === 3 && parts[2] === '' ? jsonObject(parts[1]) : null;
  if (!payload) throw invalidRequestObject('an unsigned request object must be header.payload. (an empty signature).');
  return parametersOf(app, payload);
}

function jsonObject(part: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The authorization parameters of a request object's claims; client_id the app's own. */
function parametersOf(app: App, payload: Record<string, unknown>): Params {
  if (payload.client_id !== undefined && payload.client_id !== app.id)
    throw invalidRequestObject('its client_id must be the client_id of the request.');
  if (payload.request !== undefined || payload.request_uri !== undefined)
    throw invalidRequestObject('it must not hold request or request_uri.');
  const params: Params = {};
  for (const [name, value] of Object.entries(payload)) {
    if (JWT_CLAIMS.has(name) || value === null || value === undefined) continue;
    params[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  params.client_id = app.id;
  return params;
}
