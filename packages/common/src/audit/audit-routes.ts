import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import type { Db } from '../db';
import { errors } from '../errors';
import { operatorName } from '../http/admin-auth';
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
import type { AuditActor, StoredAuditEvent } from './audit-store';

/** The peer's address as express sees it (TRUST_PROXY honoured), IPv4-mapped IPv6 written as IPv4; not reduced to a /64. */
function clientAddress(req: Request): string | null {
  const ip = req.ip ?? req.socket.remoteAddress ?? null;
  return ip && ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

/** The operator behind an admin request, with its request id and address. */
export function operatorActor(req: Request, res: Response): AuditActor {
  return { type: 'operator', id: operatorName(res), requestId: req.id, clientAddress: clientAddress(req) };
}

/** A person (or an unknown one) on a public page. */
export function requestActor(req: Request, type: 'user' | 'anonymous', id: string | null): AuditActor {
  return { type, id, requestId: req.id, clientAddress: clientAddress(req) };
}

/** Paging of every admin list: `limit` (1-1000, default 100) and the `cursor` a previous page returned. */
export const pageQuery = {
  limit: Joi.number().integer().min(1).max(1000).default(100),
  cursor: Joi.string().max(500),
};

const auditQuery = Joi.object({
  ...pageQuery,
  cursor: Joi.string()
    .pattern(/^\d{1,19}$/)
    .messages({ 'string.pattern.base': 'cursor must be the next_cursor of a previous page' }),
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

const createTokenSchema = Joi.object({
  name: Joi.string()
    .pattern(OPERATOR_NAME)
    .required()
    .messages({ 'string.pattern.base': `name ${OPERATOR_NAME_RULE}` }),
  token: Joi.string().pattern(STORED_ADMIN_TOKEN).messages({
    'string.pattern.base': 'token must be adm_ followed by 43 base64url characters (leave it out to have one made)',
  }),
});

/**
 * GET /audit (newest first, paged), and the named admin tokens: POST/GET /admin-tokens,
 * DELETE /admin-tokens/{name}. Mounted on every service's admin API.
 */
export function auditAdminRoutes(
  router: Router,
  deps: { audit: AuditLog; db: Db; environmentOperators: string[] },
): void {
  router.get('/audit', async (req, res) => {
    const q = validate(auditQuery, req.query);
    const events = await deps.audit.list({
      since: q.since,
      types: q.type?.split(','),
      before: q.cursor,
      limit: q.limit + 1,
    });
    const page = events.slice(0, q.limit);
    res.json({
      events: page.map(auditEventJson),
      next_cursor: events.length > q.limit ? page[page.length - 1].id : null,
    });
  });

  const tokens = adminTokenStore(deps.db);
  // "admin" stays reserved for ADMIN_TOKEN even where it is not set
  const configuredNames = new Set([DEFAULT_OPERATOR, ...deps.environmentOperators]);

  router.post('/admin-tokens', async (req, res) => {
    const body = validate(createTokenSchema, req.body ?? {});
    if (configuredNames.has(body.name))
      throw errors.conflict('name_taken', `${body.name} is the name of a token set in the environment.`, 'name');
    const token = body.token ?? newAdminToken();
    if (!(await tokens.insert(body.name, adminTokenHash(token), operatorName(res))))
      throw errors.conflict('name_taken', 'An admin token with this name (or this token) already exists.', 'name');
    await deps.audit.record({ type: 'admin_token.created', actor: operatorActor(req, res), subject: body.name });
    res.status(201).json({ name: body.name, token, created_by: operatorName(res) });
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

  router.delete('/admin-tokens/:name', async (req, res) => {
    if (!(await tokens.remove(req.params.name))) throw errors.notFound('No stored admin token with this name.', 'name');
    await deps.audit.record({ type: 'admin_token.revoked', actor: operatorActor(req, res), subject: req.params.name });
    res.status(204).end();
  });
}
