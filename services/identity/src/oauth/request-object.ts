import { AppError } from '@attest/common';
import type { App } from '../kernel/app-store';
import type { Params } from './authorization-request';
import type { ClientKeys } from './client-keys';
import { clientJwtProblem, decodeClientJwt } from './client-jwt';

/** The JWT claims of a request object that are not authorization request parameters. */
const JWT_CLAIMS = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti']);

export const invalidRequestObject = (problem: string) =>
  new AppError('invalid_request_object', 400, `The request object is invalid: ${problem}`, 'request');

/**
 * JAR (RFC 9101): the parameters of a request object the app signed with one of its keys (RS256, PS256
 * or ES256; never unsigned), iss = its client_id, aud = our issuer, exp required, nbf checked. Only the
 * object's parameters are used (§6.3): the caller ignores everything sent beside it but client_id.
 * A claim that is not a string (max_age as a number, claims as an object) becomes its JSON text.
 */
export async function openRequestObject(
  keys: ClientKeys,
  app: App,
  token: string,
  expect: { issuer: string; nowSeconds: number },
): Promise<Params> {
  const decoded = decodeClientJwt(token);
  if (!decoded) throw invalidRequestObject('it must be a JWT signed with RS256, PS256 or ES256.');
  const key = await keys.key(app, decoded.kid, decoded.alg);
  const problem = clientJwtProblem(decoded, key, {
    issuer: app.id,
    audiences: [expect.issuer],
    nowSeconds: expect.nowSeconds,
  });
  if (problem) throw invalidRequestObject(problem);
  const { payload } = decoded;
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
