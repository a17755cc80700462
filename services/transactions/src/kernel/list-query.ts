import type { Request } from 'express';
import Joi from 'joi';
import { errors, queryParam, validate } from '@attest/common';

/** Where a list of an app's requests or transactions goes on from: the id of the previous page's last row. */
export type ListCursor = string;

export interface ListQuery {
  appId: string;
  reference?: string;
  status?: string;
  since?: Date;
  after?: ListCursor;
  limit: number;
}

/**
 * The SQL of a page of an app's rows of `table` (transactions or payment_requests), oldest first from
 * `since`, after the cursor; its parameters are listParams(q).
 */
export const listSql = (table: 'transactions' | 'payment_requests') =>
  `SELECT * FROM ${table}
         WHERE app_id = $1 AND ($2::text IS NULL OR reference = $2) AND ($3::text IS NULL OR status = $3)
           AND ($4::timestamptz IS NULL OR created_at >= $4)
           AND ($5::text IS NULL OR (created_at, id) > (SELECT created_at, id FROM ${table} WHERE id = $5 AND app_id = $1))
         ORDER BY created_at, id LIMIT $6`;

export const listParams = (q: ListQuery) => [
  q.appId,
  q.reference ?? null,
  q.status ?? null,
  q.since ?? null,
  q.after ?? null,
  q.limit,
];

/** A page's cursor: the id of its last row, opaque to the app. */
export const encodeCursor = (c: ListCursor) => Buffer.from(c).toString('base64url');

/** The ids a cursor may hold: a payment request's, a transaction's, a webhook delivery's, a refund's. */
const CURSOR_ID = /^(pr_[0-9a-f]{32}|rf_[0-9a-f]{32}|0x[0-9a-f]{64}|whd_[0-9a-f]{32})$/;

export function decodeCursor(raw: string | undefined): ListCursor | undefined {
  if (raw === undefined) return undefined;
  const id = /^[A-Za-z0-9_-]{1,200}$/.test(raw) ? Buffer.from(raw, 'base64url').toString('utf8') : '';
  if (!CURSOR_ID.test(id))
    throw errors.invalidParameter('cursor', 'cursor must be the next_cursor of a previous page.');
  return id;
}

/** The `cursor` query parameter of every paged list of the app API. */
export const cursorSchema = Joi.string().description('next_cursor of the previous page');

/** The `limit` query parameter of every paged list of the app API: 1 to 100, 50 by default. */
export const limitSchema = Joi.number()
  .integer()
  .min(1)
  .max(100)
  .default(50)
  .description('Page size, 1 to 100 (default 50)')
  .messages({
    'number.base': 'limit must be a whole number from 1 to 100',
    'number.min': 'limit must be a whole number from 1 to 100',
    'number.max': 'limit must be a whole number from 1 to 100',
    'number.integer': 'limit must be a whole number from 1 to 100',
  });

/** The query of the list endpoints (payment requests and transactions). */
export const listQuerySchema = (statuses: readonly string[]) =>
  Joi.object({
    reference: Joi.string().max(200).description('Only this reference'),
    status: Joi.string()
      .valid(...statuses)
      .description(`Only this status: ${statuses.join(', ')}`)
      .messages({ 'any.only': `status must be one of ${statuses.join(', ')}.` }),
    since: Joi.date().iso().description('Only those created at or after this time (ISO 8601)').messages({
      'date.format': 'since must be an ISO 8601 time such as 2026-01-31T12:00:00Z',
      'date.base': 'since must be an ISO 8601 time such as 2026-01-31T12:00:00Z',
    }),
    cursor: cursorSchema,
    limit: limitSchema,
  });

/** The list query as read (each parameter once). */
export function listQuery(req: Request, statuses: readonly string[]) {
  const q = validate(listQuerySchema(statuses), {
    reference: queryParam(req.query, 'reference'),
    status: queryParam(req.query, 'status'),
    since: queryParam(req.query, 'since'),
    cursor: queryParam(req.query, 'cursor'),
    limit: queryParam(req.query, 'limit'),
  }) as { reference?: string; status?: string; since?: Date; cursor?: string; limit: number };
  return { ...q, after: decodeCursor(q.cursor) };
}

/** The answer of a list endpoint (OpenAPI): a page of `items` and the cursor of the next one. */
export const listPageSchema = (items: unknown) => ({
  type: 'object',
  required: ['data', 'next_cursor'],
  properties: {
    data: { type: 'array', items },
    next_cursor: { type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last' },
  },
});

/** The answer of a list endpoint: the page and its next cursor (null on the last page). */
export const listPage = <T>(data: T[], next: ListCursor | null) => ({
  data,
  next_cursor: next ? encodeCursor(next) : null,
});
