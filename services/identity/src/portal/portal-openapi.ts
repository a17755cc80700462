import type Joi from 'joi';
import { htmlResponse, redirectResponse, type EndpointDocs, type ResponseDoc } from '@attest/common';
import { FORM, pageError, pageFormErrors } from '../kernel/openapi-document';

/** The shapes the portal's OpenAPI fragments (each beside its route, *.openapi.ts) share. */
export const tags = ['portal'];
export const notFound = pageError('not_found: no such app, or you are not a member of it (the same answer either way)');

/** A page (GET) behind the portal session. */
export const page = (
  summary: string,
  extra: Record<number, ResponseDoc> = {},
  query?: Joi.ObjectSchema,
): EndpointDocs => ({
  GET: {
    summary,
    tags,
    ...(query ? { query } : {}),
    responses: {
      200: htmlResponse('The page'),
      302: redirectResponse('To /portal without a portal session'),
      ...extra,
    },
  },
});

/** A portal form (POST, with the session's CSRF token). */
export const portalForm = (
  summary: string,
  schema: Joi.ObjectSchema,
  extra: Record<number, ResponseDoc> = {},
): EndpointDocs => ({
  POST: {
    summary,
    tags,
    body: { contentType: FORM, schema },
    responses: {
      303: redirectResponse('Done: back to the page with a notice; to /portal without a portal session'),
      ...pageFormErrors('invalid_parameter or required, naming the field'),
      ...extra,
    },
  },
});

export const refused = {
  403: pageError('invalid_csrf, or forbidden: your role on the app does not allow this (the server refuses)'),
  404: notFound,
};
export const again = (what: string) => ({ 200: htmlResponse(`${what}`), ...refused });
export const transactionsDown = pageError('transactions_unavailable: the transactions service cannot be reached');
