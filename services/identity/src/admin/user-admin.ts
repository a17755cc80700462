import { randomBytes } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  pageOf,
  documentAdminRoute,
  emptyResponse,
  errorResponse,
  errors,
  jsonResponse,
  operatorActor,
  validate,
} from '@attest/common';
import { hashPassword } from '../domain/crypto';
import { commonPasswordError } from '../domain/passwords';
import { newUserId } from '../domain/ids';
import type { IdentityContext } from '../routes/context';
import type { User, UserUpdate } from '../store/user-store';
import { identitySchemas } from './admin-document';
import { createUserSchema, resetPasswordSchema, updateUserSchema, userListQuery } from './admin-schemas';

type UserAdminContext = Pick<
  IdentityContext,
  'users' | 'consents' | 'subjects' | 'sessions' | 'audit' | 'logger' | 'config' | 'teams' | 'onOperatorCreatedUser'
>;

export const userJson = (user: User) => ({
  user_id: user.id,
  username: user.username,
  verification_level: user.verificationLevel,
  name: user.name,
  given_name: user.givenName,
  family_name: user.familyName,
  created_at: user.createdAt.toISOString(),
  disabled: user.disabledAt !== null,
  disabled_at: user.disabledAt?.toISOString() ?? null,
});

const noUser = () => errors.notFound('No user with this user_id.', 'user_id');
const userParams = Joi.object({ id: Joi.string().description('The user_id (usr_ and 32 hexadecimal digits)') });
const userNotFound = adminNotFoundResponse('no user with this user_id (attribute user_id)');
const tags = ['users'];

const cursorOf = (username: string) => Buffer.from(username).toString('base64url');
const usernameOf = (cursor: string) => Buffer.from(cursor, 'base64url').toString();

/**
 * Users: create, list (by username, paged), show (with consents), update, disable and enable, delete,
 * reset the password, withdraw a consent. Each change drops the cached rows on every replica.
 */
export function userAdminRoutes(router: Router, ctx: UserAdminContext): void {
  const audit = (req: Request, res: Response, type: string, userId: string, detail?: Record<string, unknown>) =>
    ctx.audit.record({ type, actor: operatorActor(req, res), subject: userId, detail });

  documentAdminRoute(router, 'POST', '/users', {
    summary: 'Create a user with a password',
    tags,
    body: { contentType: 'application/json', schema: createUserSchema },
    responses: {
      201: jsonResponse('The user', {
        type: 'object',
        required: ['user_id', 'username', 'verification_level'],
        additionalProperties: false,
        properties: {
          user_id: { type: 'string' },
          username: { type: 'string' },
          verification_level: { enum: ['orb', 'device'] },
        },
      }),
      400: adminValidationResponse('username, password, verification_level, …'),
      409: errorResponse('username_taken: a user with this username already exists (attribute username)'),
    },
  });
  router.post('/users', async (req, res) => {
    const body = validate(createUserSchema, req.body);
    const weak = await commonPasswordError(body.password);
    if (weak) throw weak;
    const user = await ctx.users.insert({
      id: newUserId(),
      username: body.username,
      passwordHash: await hashPassword(body.password, ctx.config.PASSWORD_HASH_COST),
      verificationLevel: body.verification_level,
      name: body.name ?? null,
      givenName: body.given_name ?? null,
      familyName: body.family_name ?? null,
    });
    if (!user) throw errors.conflict('username_taken', 'A user with this username already exists.', 'username');
    await audit(req, res, 'user.created', user.id, {
      username: user.username,
      verification_level: user.verificationLevel,
    });
    await ctx.onOperatorCreatedUser?.({ user, operator: operatorActor(req, res) }, ctx.teams);
    res.status(201).json({ user_id: user.id, username: user.username, verification_level: user.verificationLevel });
  });

  documentAdminRoute(router, 'GET', '/users', {
    summary: 'The users by username (paged)',
    description: 'username keeps the users whose username starts with it.',
    tags,
    query: userListQuery,
    responses: {
      200: jsonResponse('A page of users', pageOf('users', identitySchemas.user)),
      400: adminValidationResponse('limit, cursor or username'),
    },
  });
  router.get('/users', async (req, res) => {
    const q = validate(userListQuery, req.query);
    const users = await ctx.users.list({
      prefix: q.username,
      after: q.cursor && usernameOf(q.cursor),
      limit: q.limit + 1,
    });
    const page = users.slice(0, q.limit);
    res.json({
      users: page.map(userJson),
      next_cursor: users.length > q.limit ? cursorOf(page[page.length - 1].username) : null,
    });
  });

  documentAdminRoute(router, 'GET', '/users/:id', {
    summary: 'One user, with the consents they gave',
    tags,
    params: userParams,
    responses: { 200: jsonResponse('The user', identitySchemas.userWithConsents), 404: userNotFound },
  });
  router.get('/users/:id', async (req, res) => {
    const user = await ctx.users.findById(req.params.id);
    if (!user) throw noUser();
    const consents = await ctx.consents.listForUser(user.id);
    res.json({
      ...userJson(user),
      consents: consents.map((c) => ({ app_id: c.appId, scopes: c.scopes, granted_at: c.grantedAt.toISOString() })),
    });
  });

  documentAdminRoute(router, 'PATCH', '/users/:id', {
    summary: 'Change a user',
    description: 'Any of the fields; null clears a name.',
    tags,
    params: userParams,
    body: { contentType: 'application/json', schema: updateUserSchema },
    responses: {
      200: jsonResponse('The user as changed', identitySchemas.user),
      400: adminValidationResponse('a field, or invalid_parameter body when none is given'),
      404: userNotFound,
    },
  });
  router.patch('/users/:id', async (req, res) => {
    const body = validate(updateUserSchema, req.body);
    const changes: UserUpdate = {
      ...(body.verification_level === undefined ? {} : { verificationLevel: body.verification_level }),
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.given_name === undefined ? {} : { givenName: body.given_name }),
      ...(body.family_name === undefined ? {} : { familyName: body.family_name }),
    };
    const user = await ctx.users.update(req.params.id, changes);
    if (!user) throw noUser();
    await audit(req, res, 'user.updated', user.id, { changed: Object.keys(body), ...body });
    res.json(userJson(user));
  });

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    documentAdminRoute(router, 'POST', `/users/:id/${action}`, {
      summary: disabled ? 'Disable a user' : 'Enable a disabled user',
      description: disabled
        ? 'A disabled user cannot sign in, their sessions end and their tokens stop working.'
        : undefined,
      tags,
      params: userParams,
      responses: { 200: jsonResponse('The user', identitySchemas.user), 404: userNotFound },
    });
    router.post(`/users/:id/${action}`, async (req, res) => {
      const user = await ctx.users.setDisabled(req.params.id, disabled);
      if (!user) throw noUser();
      // a disabled user's sessions end (their apps are told through back-channel logout)
      if (disabled) await ctx.sessions.endAll(user.id);
      await audit(req, res, disabled ? 'user.disabled' : 'user.enabled', user.id);
      res.json(userJson(user));
    });
  }

  documentAdminRoute(router, 'DELETE', '/users/:id', {
    summary: 'Delete a user',
    description: 'With their pairwise subjects, consents and sessions; their codes and tokens stop working.',
    tags,
    params: userParams,
    responses: { 204: emptyResponse('Deleted'), 404: userNotFound },
  });
  router.delete('/users/:id', async (req, res) => {
    // sessions end first, so the apps signed in to are told (back-channel logout); the rows go with the user
    await ctx.sessions.endAll(req.params.id);
    const removed = await ctx.users.remove(req.params.id);
    if (!removed) throw noUser();
    await Promise.all([
      ctx.consents.forget(req.params.id, removed.consentAppIds),
      ctx.subjects.forget(removed.subjects),
    ]);
    ctx.logger.info('user deleted', { user_id: req.params.id });
    await audit(req, res, 'user.deleted', req.params.id, { consents: removed.consentAppIds });
    res.status(204).end();
  });

  documentAdminRoute(router, 'POST', '/users/:id/reset-password', {
    summary: 'Set a user’s password, or have one generated',
    tags,
    params: userParams,
    body: {
      contentType: 'application/json',
      schema: resetPasswordSchema,
      required: false,
      description: 'Without a password (or a body), one is generated and returned once',
    },
    responses: {
      200: jsonResponse('Done; the generated password when none was given', {
        type: 'object',
        required: ['user_id'],
        additionalProperties: false,
        properties: { user_id: { type: 'string' }, password: { type: 'string', description: 'Shown once' } },
      }),
      400: adminValidationResponse('password'),
      404: userNotFound,
    },
  });
  router.post('/users/:id/reset-password', async (req, res) => {
    const body = validate(resetPasswordSchema, req.body ?? {});
    const password = body.password ?? randomBytes(18).toString('base64url');
    const weak = body.password === undefined ? null : await commonPasswordError(body.password);
    if (weak) throw weak;
    const hash = await hashPassword(password, ctx.config.PASSWORD_HASH_COST);
    if (!(await ctx.users.setPasswordHash(req.params.id, hash))) throw noUser();
    // every session of the user ends (apps told through back-channel logout; their tokens stop working)
    const ended = await ctx.sessions.endAll(req.params.id);
    await audit(req, res, 'user.password_reset', req.params.id, {
      generated: body.password === undefined,
      sessions_ended: ended,
    });
    res.json({ user_id: req.params.id, ...(body.password === undefined ? { password } : {}) });
  });

  documentAdminRoute(router, 'DELETE', '/users/:id/consents/:appId', {
    summary: 'Withdraw a user’s consent to an app; its tokens stop working',
    tags,
    params: userParams.keys({ appId: Joi.string().description('The app_id') }),
    responses: {
      204: emptyResponse('Withdrawn'),
      404: adminNotFoundResponse('no consent of this user for this app (attribute app_id)'),
    },
  });
  router.delete('/users/:id/consents/:appId', async (req, res) => {
    const withdrawn = await ctx.consents.withdraw(req.params.id, req.params.appId);
    if (!withdrawn) throw errors.notFound('No consent of this user for this app.', 'app_id');
    ctx.logger.info('consent withdrawn', { user_id: req.params.id, app_id: req.params.appId });
    await audit(req, res, 'consent.withdrawn', req.params.id, { app_id: req.params.appId });
    res.status(204).end();
  });
}
