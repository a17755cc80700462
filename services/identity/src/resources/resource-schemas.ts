import Joi from 'joi';
import { APP_ID } from '../kernel/ids';

/** Scopes a resource cannot offer: OpenID Connect's own, and refresh's. */
export const RESERVED_SCOPES = ['openid', 'profile', 'email', 'offline_access'];

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** RFC 6749 §3.3: a scope-token is one or more of %x21 / %x23-5B / %x5D-7E. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** RFC 8707 §2: an absolute URI without a fragment; https, or http on a loopback host (development). */
export function resourceUriProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URI';
  }
  if (url.hash || value.includes('#')) return 'must not contain a fragment';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return null;
  return 'must use https (http is allowed only on localhost, 127.0.0.1 or [::1])';
}

const uri = Joi.string()
  .max(2000)
  .custom((value: string, helpers) => {
    const problem = resourceUriProblem(value);
    return problem ? helpers.message({ custom: `uri ${problem}: ${value}` }) : value;
  })
  .description('The resource’s identifier, as clients send it in `resource` and tokens carry it in `aud`');
const name = Joi.string().trim().min(1).max(200).description('What the consent page calls it');
const scope = Joi.string()
  .max(200)
  .custom((value: string, helpers) => {
    if (!SCOPE_TOKEN.test(value))
      return helpers.message({ custom: `scopes: ${value} is not a scope (RFC 6749 §3.3: no spaces, quotes or \\)` });
    if (RESERVED_SCOPES.includes(value))
      return helpers.message({ custom: `scopes: ${value} is an OpenID Connect scope; a resource cannot offer it` });
    return value;
  });
const scopes = Joi.array().items(scope).max(100).unique().description('The scopes the resource offers');
const minVerificationLevel = Joi.string()
  .valid('orb', 'device', 'none')
  .allow(null)
  .description('orb or device: a token for it needs a person at that level or above; none (or null) clears it');

const machineClients = Joi.array()
  .items(
    Joi.string()
      .pattern(APP_ID)
      .messages({ 'string.pattern.base': 'machine_clients: {{#value}} is not an app id (app_…)' }),
  )
  .max(100)
  .unique()
  .description(
    'The apps that may get a token for it as themselves (grant_type=client_credentials), by client id; no other app may',
  );

const accessTokenAlg = Joi.string()
  .valid('RS256', 'PS256', 'ES256')
  .description(
    'RFC 9068 §2.1: what its access tokens are signed with. RS256 (the default) keeps the app’s own algorithm ' +
      '(a FAPI 2 app’s PS256 or ES256); PS256 or ES256 signs every token for it with that algorithm',
  );

export const createResourceSchema = Joi.object({
  uri: uri.required(),
  name: name.required(),
  scopes: scopes.default([]),
  min_verification_level: minVerificationLevel,
  machine_clients: machineClients.default([]),
  access_token_alg: accessTokenAlg.default('RS256'),
});

export const updateResourceSchema = Joi.object({
  name,
  scopes,
  min_verification_level: minVerificationLevel,
  machine_clients: machineClients,
  access_token_alg: accessTokenAlg,
})
  .min(1)
  .messages({ 'object.min': 'Give name, scopes, min_verification_level, machine_clients or access_token_alg.' });
