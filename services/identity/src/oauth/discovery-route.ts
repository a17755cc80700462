import type { Router } from 'express';
import { endpoint } from '@attest/common';
import { DPOP_ALGORITHMS } from './dpop';
import { ACR_VALUES_SUPPORTED } from './assurance';
import { RESPONSE_MODES, RESPONSE_TYPES } from './authorization-request';
import { CLIENT_SIGNING_ALGS } from './client-keys';
import { SUPPORTED_SCOPES } from '../kernel/scopes';
import type { KernelServices } from '../kernel/services';
import { prepareJson } from '../kernel/prepared-json';
import { sendPrepared } from '../kernel/send-prepared';
import { openCors } from '../kernel/http-steps';
import { discoveryDocs } from './discovery-route.openapi';

/** GET /.well-known/openid-configuration (SPEC 2.1, 4.1). */
/** What /.well-known/openid-configuration uses. */
export type DiscoveryRouteDeps = Pick<KernelServices, 'config'>;

/**
 * The provider's metadata (OpenID Connect Discovery 1.0 §3, RFC 8414 §2): the OpenID document serves it as
 * it is; the OAuth authorization server document (registration/) serves it with what it adds.
 */
export function discoveryMetadata(config: DiscoveryRouteDeps['config']): Record<string, unknown> {
  const base = config.issuer;
  return {
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    userinfo_endpoint: `${base}/userinfo`,
    jwks_uri: `${base}/jwks`,
    // offline_access (issue 41): the code's exchange gives a refresh token
    scopes_supported: [...SUPPORTED_SCOPES, 'offline_access'],
    response_types_supported: [...RESPONSE_TYPES],
    grant_types_supported: [
      'authorization_code',
      'implicit',
      'refresh_token',
      'client_credentials',
      'urn:openid:params:grant-type:ciba',
      // RFC 8628 (issue 41): for apps it is enabled for (device_authorization_grant)
      'urn:ietf:params:oauth:grant-type:device_code',
      // RFC 8693 (issue 42): an agent acting for a person; the RFC defines no metadata of its own
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ],
    subject_types_supported: ['pairwise'],
    id_token_signing_alg_values_supported: ['RSA', 'RS256', 'PS256', 'ES256'],
    response_modes_supported: [...RESPONSE_MODES],
    code_challenge_methods_supported: ['S256'],
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    token_endpoint_auth_signing_alg_values_supported: [...CLIENT_SIGNING_ALGS],
    introspection_endpoint: `${base}/introspect`,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'],
    introspection_endpoint_auth_signing_alg_values_supported: [...CLIENT_SIGNING_ALGS],
    revocation_endpoint: `${base}/revoke`,
    device_authorization_endpoint: `${base}/device_authorization`,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt', 'none'],
    revocation_endpoint_auth_signing_alg_values_supported: [...CLIENT_SIGNING_ALGS],
    // RFC 9126: per app (require_pushed_authorization_requests), never for every app
    pushed_authorization_request_endpoint: `${base}/par`,
    require_pushed_authorization_requests: false,
    // RFC 9101: request objects, by value or pushed; a request_uri is only ever one of /par's. Unsigned
    // ones (none) from apps outside the fapi2 profile (OpenID Connect Discovery §3: none and RS256 SHOULD be)
    request_parameter_supported: true,
    request_uri_parameter_supported: false,
    request_object_signing_alg_values_supported: ['none', ...CLIENT_SIGNING_ALGS],
    // RFC 9207
    authorization_response_iss_parameter_supported: true,
    end_session_endpoint: `${base}/logout`,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    frontchannel_logout_supported: false,
    acr_values_supported: ACR_VALUES_SUPPORTED,
    // CIBA Core 1.0 (issue 42): poll and ping, login_hint or id_token_hint, no user_code, no signed requests
    backchannel_authentication_endpoint: `${base}/bc-authorize`,
    backchannel_token_delivery_modes_supported: ['poll', 'ping'],
    backchannel_user_code_parameter_supported: false,
    // RFC 9396: the types /bc-authorize understands and shows the person in words
    authorization_details_types_supported: ['payment', 'action'],
    claims_parameter_supported: true,
    claims_supported: [
      'sub',
      'iss',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'acr',
      'amr',
      'sid',
      'nonce',
      'at_hash',
      'c_hash',
      'email',
      'name',
      'given_name',
      'family_name',
      `${base}/v1`,
      `${base}/beta`,
      // RFC 9396 §9.1 (issue 42): what a person approved, in a CIBA grant's tokens
      'authorization_details',
    ],
  };
}

export function discoveryRoute(router: Router, ctx: DiscoveryRouteDeps): void {
  const document = prepareJson(discoveryMetadata(ctx.config));
  const cors = openCors('GET');
  endpoint(
    router,
    '/.well-known/openid-configuration',
    {
      GET: [cors, (req, res) => sendPrepared(req, res, document, 'public, max-age=3600')],
      OPTIONS: [cors],
    },
    discoveryDocs,
    { fast: true },
  );
}
