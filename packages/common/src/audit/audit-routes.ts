import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import type { Db } from '../db';
import { errors } from '../errors';
import { operatorName } from '../http/admin-auth';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  pageOf,
  DATE_TIME,
  documentAdminRoute,
  NULLABLE_DATE_TIME,
} from '../http/admin-docs';
import { listPage, pageCursor, pageQuery } from '../http/admin-paging';
import type { JsonSchema } from '../http/api-registry';
import { emptyResponse, errorResponse, jsonResponse } from '../http/openapi';
import { validate } from '../validation';
import {
  adminTokenHash,
  adminTokenStore,
  DEFAULT_OPERATOR,
  newAdminToken,
  OPERATOR_NAME,
  OPERATOR_NAME_RULE,
  STORED_ADMIN_TOKEN,
} from './admin-tokens';
import type { AuditLog } from './audit-log';
import type { AuditActor, AuditEvent, StoredAuditEvent } from './audit-store';

/** The peer's address as express sees it (TRUST_PROXY honoured), IPv4-mapped IPv6 written as IPv4; not reduced to a /64. */
function clientAddress(req: Request): string | null {
  const ip = req.ip ?? req.socket.remoteAddress ?? null;
  return ip && ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

/** The operator behind an admin request, with its request id and address. */
export function operatorActor(req: Request, res: Response): AuditActor {
  return { type: 'operator', id: operatorName(res), requestId: req.id, clientAddress: clientAddress(req) };
}

/** Records what an operator did through the admin API: the actor is the request's operator. */
export function auditOperatorAction(
  audit: Pick<AuditLog, 'record'>,
  req: Request,
  res: Response,
  event: Omit<AuditEvent, 'actor'>,
): Promise<void> {
  const { type, ...rest } = event;
  return audit.record({ type, actor: operatorActor(req, res), ...rest });
}

/** A person (or an unknown one) on a public page. */
export function requestActor(req: Request, type: 'user' | 'anonymous', id: string | null): AuditActor {
  return { type, id, requestId: req.id, clientAddress: clientAddress(req) };
}

export const auditQuery = Joi.object({
  ...pageQuery,
  cursor: pageCursor(/^\d{1,19}$/),
  since: Joi.date()
    .iso()
    .messages({ 'date.format': 'since must be an ISO 8601 date or time, such as 2025-01-31 or 2025-01-31T12:00:00Z' }),
  type: Joi.string()
    .pattern(/^[a-z_]+\.[a-z_]+(,[a-z_]+\.[a-z_]+)*$/)
    .messages({
      'string.pattern.base':
        'type must be one or more event types separated by commas, such as user.disabled,app.disabled',
    }),
});

export const auditEventJson = (e: StoredAuditEvent) => ({
  id: e.id,
  at: e.at.toISOString(),
  type: e.type,
  actor: { type: e.actorType, id: e.actor },
  subject: e.subject,
  request_id: e.requestId,
  client_address: e.clientAddress,
  detail: e.detail,
});

export const createTokenSchema = Joi.object({
  name: Joi.string()
    .pattern(OPERATOR_NAME)
    .required()
    .messages({ 'string.pattern.base': `name ${OPERATOR_NAME_RULE}` }),
  token: Joi.string().pattern(STORED_ADMIN_TOKEN).messages({
    'string.pattern.base': 'token must be adm_ followed by 43 base64url characters (leave it out to have one made)',
  }),
});

const AUDIT_EVENT: JsonSchema = {
  type: 'object',
  required: ['id', 'at', 'type', 'actor', 'subject', 'request_id', 'client_address', 'detail'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^\\d+$', description: 'Increasing; the cursor of the next page is one' },
    at: DATE_TIME,
    type: { type: 'string', description: '<noun>.<past-tense verb>, such as user.disabled' },
    actor: {
      type: 'object',
      required: ['type', 'id'],
      additionalProperties: false,
      properties: {
        type: { enum: ['operator', 'user', 'app', 'system', 'anonymous'] },
        id: { type: ['string', 'null'], description: 'The operator (admin token name), user id or worker' },
      },
    },
    subject: { type: ['string', 'null'], description: 'What it happened to: an app id, a user id, a key id…' },
    request_id: { type: ['string', 'null'], description: 'The X-Request-Id of the request that did it' },
    client_address: { type: ['string', 'null'] },
    detail: { type: 'object', description: 'Facts that help a reader; never a secret' },
  },
};

const ADMIN_TOKEN_NAME: JsonSchema = { type: 'string', pattern: OPERATOR_NAME.source };

/**
 * GET /audit (newest first, paged), and the named admin tokens: POST/GET /admin-tokens,
 * DELETE /admin-tokens/{name}. Mounted on every service's admin API.
 */
export function auditAdminRoutes(
  router: Router,
  deps: { audit: AuditLog; db: Db; environmentOperators: string[] },
): void {
  documentAdminRoute(router, 'GET', '/audit', {
    summary: 'The audit trail, newest first (paged)',
    description:
      'Who changed what and when: operators through this API, people on the sign-in pages, workers. ' +
      'Pass next_cursor back as cursor for the next page, until it is null.',
    tags: ['audit'],
    query: auditQuery,
    responses: {
      200: jsonResponse('A page of events', pageOf('events', AUDIT_EVENT)),
      400: adminValidationResponse('limit, cursor, since or type'),
    },
  });
  router.get('/audit', async (req, res) => {
    const q = validate(auditQuery, req.query);
    const events = await deps.audit.list({
      since: q.since,
      types: q.type?.split(','),
      before: q.cursor,
      limit: q.limit + 1,
    });
    res.json(listPage('events', events, q.limit, auditEventJson, (e) => e.id));
  });

  const tokens = adminTokenStore(deps.db);
  // "admin" stays reserved for ADMIN_TOKEN even where it is not set
  const configuredNames = new Set([DEFAULT_OPERATOR, ...deps.environmentOperators]);

  documentAdminRoute(router, 'POST', '/admin-tokens', {
    summary: 'Create a named admin token',
    description:
      'Stored as a SHA-256 hash only; the token is in this answer and nowhere else. Leave token out to ' +
      'have one made.',
    tags: ['admin tokens'],
    body: { contentType: 'application/json', schema: createTokenSchema },
    responses: {
      201: jsonResponse('The token, shown once', {
        type: 'object',
        required: ['name', 'token', 'created_by'],
        additionalProperties: false,
        properties: {
          name: ADMIN_TOKEN_NAME,
          token: { type: 'string', pattern: STORED_ADMIN_TOKEN.source },
          created_by: { type: 'string', description: 'The operator who made it' },
        },
      }),
      400: adminValidationResponse('name or token'),
      409: errorResponse('name_taken: a token of the environment or a stored token has this name (or this token)'),
    },
  });
  router.post('/admin-tokens', async (req, res) => {
    const body = validate(createTokenSchema, req.body ?? {});
    if (configuredNames.has(body.name))
      throw errors.conflict('name_taken', `${body.name} is the name of a token set in the environment.`, 'name');
    const token = body.token ?? newAdminToken();
    if (!(await tokens.insert(body.name, adminTokenHash(token), operatorName(res))))
      throw errors.conflict('name_taken', 'An admin token with this name (or this token) already exists.', 'name');
    await auditOperatorAction(deps.audit, req, res, { type: 'admin_token.created', subject: body.name });
    res.status(201).json({ name: body.name, token, created_by: operatorName(res) });
  });

  documentAdminRoute(router, 'GET', '/admin-tokens', {
    summary: 'The admin tokens: names and where they come from (never the tokens)',
    tags: ['admin tokens'],
    responses: {
      200: jsonResponse('The environment’s tokens, then the stored ones by name', {
        type: 'object',
        required: ['tokens'],
        additionalProperties: false,
        properties: {
          tokens: {
            type: 'array',
            items: {
              type: 'object',
              required: ['name', 'source', 'created_at', 'created_by'],
              additionalProperties: false,
              properties: {
                name: ADMIN_TOKEN_NAME,
                source: { enum: ['environment', 'stored'] },
                created_at: { ...NULLABLE_DATE_TIME, description: 'null for a token of the environment' },
                created_by: { type: ['string', 'null'] },
              },
            },
          },
        },
      }),
    },
  });
  router.get('/admin-tokens', async (_req, res) => {
    const stored = await tokens.list();
    res.json({
      tokens: [
        ...deps.environmentOperators.map((name) => ({
          name,
          source: 'environment',
          created_at: null,
          created_by: null,
        })),
        ...stored.map((t) => ({
          name: t.name,
          source: 'stored',
          created_at: t.createdAt.toISOString(),
          created_by: t.createdBy,
        })),
      ],
    });
  });

  documentAdminRoute(router, 'DELETE', '/admin-tokens/:name', {
    summary: 'Revoke a stored admin token',
    description: 'It stops working at once on every replica. Tokens of the environment are changed there.',
    tags: ['admin tokens'],
    responses: {
      204: emptyResponse('Revoked'),
      404: adminNotFoundResponse('no stored admin token with this name (attribute name)'),
    },
  });
  router.delete('/admin-tokens/:name', async (req, res) => {
    if (!(await tokens.remove(req.params.name))) throw errors.notFound('No stored admin token with this name.', 'name');
    await auditOperatorAction(deps.audit, req, res, { type: 'admin_token.revoked', subject: req.params.name });
    res.status(204).end();
  });
}
