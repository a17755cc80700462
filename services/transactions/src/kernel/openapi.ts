import {
  countedErrorResponse,
  errorResponse,
  tooManyRequestsResponse,
  type JsonSchema,
  type ResponseDoc,
} from '@attest/common';

/** The pieces the features' OpenAPI fragments are written with (the documents are assembled in api-documents.ts). */

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const nullableString: JsonSchema = { type: ['string', 'null'] };

/** An object schema whose properties are all required (unless `required` says otherwise), nothing more. */
export const object = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  required,
  additionalProperties: false,
  properties,
});

/** The answers of the API-key check every app endpoint starts with. */
export const apiKeyResponses: Record<number, ResponseDoc> = {
  401: countedErrorResponse(
    'unauthenticated: no, malformed, unknown or revoked API key, or the key of an app an operator disabled (not counted)',
  ),
  403: errorResponse('invalid_app: the API key belongs to another app than app_id'),
  429: tooManyRequestsResponse('unknown or revoked API keys'),
};

/** The 403 of an app endpoint that pays or asks to be paid at an address: invalid_app, or not the app's address. */
export const receivingAddressResponses: Record<number, ResponseDoc> = {
  403: errorResponse(
    'invalid_app: the API key belongs to another app than app_id. receiving_address_not_registered (attribute to): ' +
      '`to` is not one of this app’s receiving addresses on the chain (add it: /api/v2/client/receiving-addresses)',
  ),
};
