import { randomBytes } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  type AuditLog,
  DATE_TIME,
  documentAdminRoute,
  emptyResponse,
  errorResponse,
  errors,
  jsonResponse,
  type JsonSchema,
  listPage,
  type Logger,
  NULLABLE_DATE_TIME,
  operatorActor,
  pageOf,
  validate,
} from '@attest/common';
import { hashPassword } from '../kernel/crypto';
import { commonPasswordError } from '../kernel/passwords';
import { newUserId } from '../kernel/ids';
import type { IdentityConfig } from '../config';
import type { ConsentDirectory, SubjectDirectory, UserDirectory } from '../kernel/directories';
import type { OperatorCreatedUserHook } from '../kernel/operator-hook';
import type { Sessions } from '../kernel/sessions';
import type { AppTeams } from '../kernel/teams';
import type { User, UserUpdate } from '../kernel/user-store';
import { object, ref, strings } from './admin-openapi';
import { disableEnableRoutes, lifecycleJson } from './admin-lifecycle';
import { createUserSchema, resetPasswordSchema, updateUserSchema, userListQuery } from './admin-schemas';

/** What the users of the admin API use. */
export interface UserAdminDeps {
  config: IdentityConfig;
  logger: Logger;
  audit: Pick<AuditLog, 'record'>;
  users: UserDirectory;
  consents: Pick<ConsentDirectory, 'listForUser' | 'forget' | 'withdraw'>;
  subjects: Pick<SubjectDirectory, 'forget'>;
  /** A disabled or deleted user's sessions end; so do they after a password reset. */
  sessions: Pick<Sessions, 'endAll'>;
  /** Handed to onOperatorCreatedUser. */
  teams: AppTeams;
  /** Runs after an operator creates a user through the admin API (never on self sign-up). */
  onOperatorCreatedUser?: OperatorCreatedUserHook;
}

const USER_PROPERTIES: Record<string, JsonSchema> = {
  user_id: { type: 'string', pattern: '^usr_[0-9a-f]{32}$' },
  username: { type: 'string' },
  verification_level: { enum: ['orb', 'device'] },
  name: { type: ['string', 'null'] },
  given_name: { type: ['string', 'null'] },
  family_name: { type: ['string', 'null'] },
  created_at: DATE_TIME,
  disabled: { type: 'boolean' },
  disabled_at: NULLABLE_DATE_TIME,
};

/** The admin document's schemas of users. */
export const userSchemas: Record<string, JsonSchema> = {
  User: object(USER_PROPERTIES),
  UserWithConsents: object({
    ...USER_PROPERTIES,
    consents: {
      type: 'array',
      items: object({ app_id: { type: 'string' }, scopes: strings, granted_at: DATE_TIME }),
    },
  }),
};
const userSchema = ref('User');
const userWithConsentsSchema = ref('UserWithConsents');

export const userJson = (user: User) => ({
  user_id: user.id,
  username: user.username,
  verification_level: user.verificationLevel,
  name: user.name,
  given_name: user.givenName,
  family_name: user.familyName,
  ...lifecycleJson(user),
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
export function userAdminRoutes(router: Router, deps: UserAdminDeps): void {
  const audit = (req: Request, res: Response, type: string, userId: string, detail?: Record<string, unknown>) =>
    deps.audit.record({ type, actor: operatorActor(req, res), subject: userId, detail });

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
    const user = await deps.users.insert({
      id: newUserId(),
      username: body.username,
      passwordHash: await hashPassword(body.password, deps.config.PASSWORD_HASH_COST),
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
    await deps.onOperatorCreatedUser?.({ user, operator: operatorActor(req, res) }, deps.teams);
    res.status(201).json({ user_id: user.id, username: user.username, verification_level: user.verificationLevel });
  });

  documentAdminRoute(router, 'GET', '/users', {
    summary: 'The users by username (paged)',
    description: 'username keeps the users whose username starts with it.',
    tags,
    query: userListQuery,
    responses: {
      200: jsonResponse('A page of users', pageOf('users', userSchema)),
      400: adminValidationResponse('limit, cursor or username'),
    },
  });
  router.get('/users', async (req, res) => {
    const q = validate(userListQuery, req.query);
    const users = await deps.users.list({
      prefix: q.username,
      after: q.cursor && usernameOf(q.cursor),
      limit: q.limit + 1,
    });
    res.json(listPage('users', users, q.limit, userJson, (user) => cursorOf(user.username)));
  });

  documentAdminRoute(router, 'GET', '/users/:id', {
    summary: 'One user, with the consents they gave',
    tags,
    params: userParams,
    responses: { 200: jsonResponse('The user', userWithConsentsSchema), 404: userNotFound },
  });
  router.get('/users/:id', async (req, res) => {
    const user = await deps.users.findById(req.params.id);
    if (!user) throw noUser();
    const consents = await deps.consents.listForUser(user.id);
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
      200: jsonResponse('The user as changed', userSchema),
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
    const user = await deps.users.update(req.params.id, changes);
    if (!user) throw noUser();
    await audit(req, res, 'user.updated', user.id, { changed: Object.keys(body), ...body });
    res.json(userJson(user));
  });

  disableEnableRoutes(
    router,
    '/users/:id',
    (disabled) => ({
      summary: disabled ? 'Disable a user' : 'Enable a disabled user',
      description: disabled
        ? 'A disabled user cannot sign in, their sessions end and their tokens stop working.'
        : undefined,
      tags,
      params: userParams,
      responses: { 200: jsonResponse('The user', userSchema), 404: userNotFound },
    }),
    async (req, res, disabled) => {
      const user = await deps.users.setDisabled(String(req.params.id), disabled);
      if (!user) throw noUser();
      // a disabled user's sessions end (their apps are told through back-channel logout)
      if (disabled) await deps.sessions.endAll(user.id);
      await audit(req, res, disabled ? 'user.disabled' : 'user.enabled', user.id);
      res.json(userJson(user));
    },
  );

  documentAdminRoute(router, 'DELETE', '/users/:id', {
    summary: 'Delete a user',
    description: 'With their pairwise subjects, consents and sessions; their codes and tokens stop working.',
    tags,
    params: userParams,
    responses: { 204: emptyResponse('Deleted'), 404: userNotFound },
  });
  router.delete('/users/:id', async (req, res) => {
    // sessions end first, so the apps signed in to are told (back-channel logout); the rows go with the user
    await deps.sessions.endAll(req.params.id);
    const removed = await deps.users.remove(req.params.id);
    if (!removed) throw noUser();
    await Promise.all([
      deps.consents.forget(req.params.id, removed.consentAppIds),
      deps.subjects.forget(removed.subjects),
    ]);
    deps.logger.info('user deleted', { user_id: req.params.id });
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
    const hash = await hashPassword(password, deps.config.PASSWORD_HASH_COST);
    if (!(await deps.users.setPasswordHash(req.params.id, hash))) throw noUser();
    // every session of the user ends (apps told through back-channel logout; their tokens stop working)
    const ended = await deps.sessions.endAll(req.params.id);
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
    const withdrawn = await deps.consents.withdraw(req.params.id, req.params.appId);
    if (!withdrawn) throw errors.notFound('No consent of this user for this app.', 'app_id');
    deps.logger.info('consent withdrawn', { user_id: req.params.id, app_id: req.params.appId });
    await audit(req, res, 'consent.withdrawn', req.params.id, { app_id: req.params.appId });
    res.status(204).end();
  });
}
