import {
  countedErrorResponse,
  emptyResponse,
  tooManyRequestsResponse,
  type OperationDoc,
  type ResponseDoc,
  type ParameterDoc,
} from '@attest/common';

// OpenAPI pieces several OAuth endpoints share (DPoP, client authentication, CORS).

/** The DPoP proof header (RFC 9449 §4) of /token and /userinfo. */
export const dpopParameter = (description: string): ParameterDoc => ({
  name: 'DPoP',
  in: 'header',
  required: false,
  description,
  schema: { type: 'string', description: 'A JWT: typ dpop+jwt, alg of dpop_signing_alg_values_supported, jwk' },
});

export const DPOP_NONCE_HEADER = {
  'DPoP-Nonce': {
    description:
      'For a request with a DPoP proof: a nonce to put in the next proof (required with DPOP_NONCE_REQUIRED)',
    schema: { type: 'string' },
  },
};

export const basicAuth = [{ clientBasic: [] }];

export const CORS_PREFLIGHT: OperationDoc = {
  summary: 'CORS preflight',
  tags: ['oidc'],
  responses: { 204: emptyResponse('The methods and headers other origins may use') },
};

export const credentialErrors = (extra401 = ''): Record<number, ResponseDoc> => ({
  401: countedErrorResponse(`unauthenticated${extra401}`),
  429: tooManyRequestsResponse('wrong client credentials'),
});
