import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  type AuditLog,
  DATE_TIME,
  documentAdminRoute,
  emptyResponse,
  errors,
  jsonResponse,
  type JsonSchema,
  operatorActor,
} from '@attest/common';
import type { Session, Sessions } from '../kernel/sessions';
import { object, ref, strings } from './admin-openapi';

/** The admin document's schema of a session. */
export const sessionSchemas: Record<string, JsonSchema> = {
  Session: object({
    session_id: { type: 'string' },
    created_at: DATE_TIME,
    last_seen_at: DATE_TIME,
    expires_at: DATE_TIME,
    auth_time: { type: 'integer', description: 'Seconds since the epoch' },
    amr: { ...strings, description: 'RFC 8176 authentication methods, e.g. pwd' },
    device: { type: ['string', 'null'] },
    address: { type: ['string', 'null'] },
    app_ids: { ...strings, description: 'The apps signed in to through this session' },
  }),
};

const iso = (ms: number) => new Date(ms).toISOString();

/** A session as the admin API and the account page show it (never the cookie or its hash). */
export const publicSession = (s: Session) => ({
  session_id: s.id,
  created_at: iso(s.createdAt),
  last_seen_at: iso(s.lastSeenAt),
  expires_at: iso(s.expiresAt),
  auth_time: s.authTime,
  amr: s.amr,
  device: s.device,
  address: s.address,
  app_ids: s.clientIds,
});

/** What the sessions of the admin API use. */
export interface SessionAdminDeps {
  sessions: Pick<Sessions, 'listForUser' | 'end' | 'endAll'>;
  audit: Pick<AuditLog, 'record'>;
}

/** A user's sessions: list, end one, end all (the apps signed in to are told: back-channel logout). */
export function sessionAdminRoutes(router: Router, deps: SessionAdminDeps): void {
  const userParams = Joi.object({ id: Joi.string().description('The user_id') });
  const tags = ['sessions'];
  documentAdminRoute(router, 'GET', '/users/:id/sessions', {
    summary: 'A user’s live sessions',
    description: 'Never the cookie or its hash. An unknown user has none.',
    tags,
    params: userParams,
    responses: { 200: jsonResponse('The sessions', { type: 'array', items: ref('Session') }) },
  });
  router.get('/users/:id/sessions', async (req, res) => {
    res.json((await deps.sessions.listForUser(req.params.id)).map(publicSession));
  });

  documentAdminRoute(router, 'DELETE', '/users/:id/sessions/:sessionId', {
    summary: 'End one session of a user',
    description: 'The apps signed in to through it are told (back-channel logout).',
    tags,
    params: userParams.keys({ sessionId: Joi.string().description('The session_id') }),
    responses: {
      204: emptyResponse('Ended'),
      404: adminNotFoundResponse('no such session of this user (attribute session_id)'),
    },
  });
  router.delete('/users/:id/sessions/:sessionId', async (req, res) => {
    if (!(await deps.sessions.end(req.params.id, req.params.sessionId)))
      throw errors.notFound('No such session of this user.', 'session_id');
    await deps.audit.record({
      type: 'session.ended',
      actor: operatorActor(req, res),
      subject: req.params.id,
      detail: { session_id: req.params.sessionId },
    });
    res.status(204).end();
  });

  documentAdminRoute(router, 'DELETE', '/users/:id/sessions', {
    summary: 'End every session of a user',
    tags,
    params: userParams,
    responses: {
      200: jsonResponse('How many ended', {
        type: 'object',
        required: ['ended'],
        additionalProperties: false,
        properties: { ended: { type: 'integer', minimum: 0 } },
      }),
    },
  });
  router.delete('/users/:id/sessions', async (req, res) => {
    const ended = await deps.sessions.endAll(req.params.id);
    await deps.audit.record({
      type: 'session.ended',
      actor: operatorActor(req, res),
      subject: req.params.id,
      detail: { all: true, count: ended },
    });
    res.json({ ended });
  });
}
