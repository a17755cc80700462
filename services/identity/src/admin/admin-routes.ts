import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  documentAdminRoute,
  emptyResponse,
  errors,
  jsonResponse,
  operatorActor,
  validate,
} from '@attest/common';
import type { Session } from '../domain/sessions';
import type { IdentityContext } from '../routes/context';
import type { StoredKey } from '../store/key-store';
import { identitySchemas } from './admin-document';
import { rotateKeySchema } from './admin-schemas';
import { appAdminRoutes } from './app-admin';
import { memberAdminRoutes } from './member-admin';
import { userAdminRoutes } from './user-admin';

export { redirectUriProblem } from './admin-schemas';

const keyJson = (k: StoredKey) => ({
  ...k.publicJwk,
  created_at: k.createdAt.toISOString(),
  retired_at: k.retiredAt?.toISOString() ?? null,
  unpublish_at: k.unpublishAt?.toISOString() ?? null,
  active: k.retiredAt === null,
});

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

/** Admin API (admin port only): apps, users, signing keys. The audit trail and admin tokens come from common. */
export function identityAdminRoutes(router: Router, ctx: IdentityContext): void {
  appAdminRoutes(router, ctx);
  memberAdminRoutes(router, ctx);
  userAdminRoutes(router, ctx);

  const userParams = Joi.object({ id: Joi.string().description('The user_id') });
  const tags = ['sessions'];
  documentAdminRoute(router, 'GET', '/users/:id/sessions', {
    summary: 'A user’s live sessions',
    description: 'Never the cookie or its hash. An unknown user has none.',
    tags,
    params: userParams,
    responses: { 200: jsonResponse('The sessions', { type: 'array', items: identitySchemas.session }) },
  });
  router.get('/users/:id/sessions', async (req, res) => {
    res.json((await ctx.sessions.listForUser(req.params.id)).map(publicSession));
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
    if (!(await ctx.sessions.end(req.params.id, req.params.sessionId)))
      throw errors.notFound('No such session of this user.', 'session_id');
    await ctx.audit.record({
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
    const ended = await ctx.sessions.endAll(req.params.id);
    await ctx.audit.record({
      type: 'session.ended',
      actor: operatorActor(req, res),
      subject: req.params.id,
      detail: { all: true, count: ended },
    });
    res.json({ ended });
  });

  documentAdminRoute(router, 'GET', '/keys', {
    summary: 'The published signing keys, newest first',
    tags: ['signing keys'],
    responses: {
      200: jsonResponse('The keys', {
        type: 'object',
        required: ['keys'],
        additionalProperties: false,
        properties: { keys: { type: 'array', items: identitySchemas.signingKey } },
      }),
    },
  });
  router.get('/keys', async (_req, res) => void res.json({ keys: (await ctx.keys.list()).map(keyJson) }));

  documentAdminRoute(router, 'POST', '/keys/rotate', {
    summary: 'Sign with a new key from now on',
    description:
      'The old key stays published until the tokens it signed have expired. With `revoke_previous` (emergency ' +
      'rotation, a key may be compromised) every earlier key leaves the JWKS at once and the tokens it signed ' +
      'are inactive at /introspect and /userinfo on every replica.',
    tags: ['signing keys'],
    body: { contentType: 'application/json', schema: rotateKeySchema, required: false },
    responses: {
      200: jsonResponse('The new key id, the one it replaced, and the keys revoked', {
        type: 'object',
        required: ['kid', 'retired', 'revoked'],
        additionalProperties: false,
        properties: {
          kid: { type: 'string' },
          retired: { type: ['string', 'null'] },
          revoked: { type: 'array', items: { type: 'string' }, description: 'Kids taken out of the JWKS at once' },
        },
      }),
      400: adminValidationResponse('revoke_previous'),
    },
  });
  router.post('/keys/rotate', async (req, res) => {
    const body = validate(rotateKeySchema, req.body ?? {});
    const rotated = await ctx.keys.rotate({ revokePrevious: body.revoke_previous === true });
    await ctx.audit.record({
      type: 'signing_key.rotated',
      actor: operatorActor(req, res),
      subject: rotated.kid,
      detail: { retired: rotated.retired, revoked: rotated.revoked },
    });
    for (const kid of rotated.revoked)
      await ctx.audit.record({
        type: 'signing_key.revoked',
        actor: operatorActor(req, res),
        subject: kid,
        detail: { replaced_by: rotated.kid },
      });
    res.json(rotated);
  });
}
