import type { Request, Response, Router } from 'express';
import { documentRoute, type JsonSchema, type Method, type OperationDoc, type ResponseDoc } from './api-registry';
import { bodyErrorResponses, errorResponse } from './openapi';

/** The admin token, as the admin API's document declares it (the `adminToken` security scheme). */
export const ADMIN_TOKEN_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  description:
    'ADMIN_TOKEN (the operator "admin"), the token of a pair of ADMIN_TOKENS, or a token made with ' +
    '`pnpm manage admin-token create`; the audit trail names its operator.',
};

/** 401 from the admin token check every /admin route starts with. */
export const adminUnauthenticatedResponse: ResponseDoc = errorResponse(
  'unauthenticated: no `Authorization: Bearer` admin token, or one that is not configured or stored (revoked)',
  {
    'WWW-Authenticate': {
      description: 'Bearer realm="admin" (with error="invalid_token" when a token was sent)',
      schema: { type: 'string' },
    },
  },
);

/** 400 `required` / `invalid_parameter`, naming the field. */
export const adminValidationResponse = (what: string): ResponseDoc =>
  errorResponse(`required or invalid_parameter, naming the field: ${what}`);

/** 404 not_found naming the field whose value matches nothing. */
export const adminNotFoundResponse = (what: string): ResponseDoc => errorResponse(`not_found: ${what}`);

/** A time as the admin API writes it (ISO 8601, UTC, milliseconds). */
export const DATE_TIME: JsonSchema = { type: 'string', format: 'date-time' };
export const NULLABLE_DATE_TIME: JsonSchema = { type: ['string', 'null'], format: 'date-time' };

/** An admin operation: the security and the 401 are added by documentAdminRoute. */
/** A page of a paged admin list: the items under `key`, and the cursor of the next page (null on the last). */
export const pageOf = (key: string, items: JsonSchema): JsonSchema => ({
  type: 'object',
  required: [key, 'next_cursor'],
  additionalProperties: false,
  properties: {
    [key]: { type: 'array', items },
    next_cursor: { type: ['string', 'null'], description: 'The cursor of the next page, or null' },
  },
});

export type AdminOperationDoc = Omit<OperationDoc, 'security'>;

/**
 * Documents a route of the admin API (mounted under /admin, behind the admin token): the operation gets
 * the `adminToken` security requirement and its 401, and a POST or PATCH the errors of reading a body
 * (its own 400 description first): the admin API reads a JSON body sent with any of them, even one
 * whose operation needs none.
 */
export function documentAdminRoute(router: object, method: Method, path: string, doc: AdminOperationDoc): void {
  const { 400: badRequest, ...responses } = doc.responses;
  const readsBody = doc.body !== undefined || method === 'POST' || method === 'PATCH';
  const bodyErrors = () =>
    bodyErrorResponses(
      badRequest?.description ??
        (doc.body ? 'invalid_parameter' : 'This operation needs no body, but a JSON body sent is read'),
    );
  documentRoute(router, method, path, {
    ...doc,
    security: [{ adminToken: [] }],
    responses: {
      ...(readsBody ? bodyErrors() : badRequest ? { 400: badRequest } : {}),
      401: adminUnauthenticatedResponse,
      ...responses,
    },
  });
}

/**
 * An admin API operation: its entry in the admin document (documentAdminRoute) and its handler, on one
 * path (documented first, then mounted).
 */
export function adminRoute(
  router: Router,
  method: Method,
  path: string,
  doc: AdminOperationDoc,
  handler: (req: Request<Record<string, string>>, res: Response) => Promise<void>,
): void {
  documentAdminRoute(router, method, path, doc);
  router[method.toLowerCase() as Lowercase<Method>](path, handler);
}
