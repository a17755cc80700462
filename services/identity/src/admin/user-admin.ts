import { randomBytes } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { errors, operatorActor, validate } from '@attest/common';
import { hashPassword } from '../domain/crypto';
import { newUserId } from '../domain/ids';
import type { IdentityContext } from '../routes/context';
import type { User, UserUpdate } from '../store/user-store';
import { createUserSchema, resetPasswordSchema, updateUserSchema, userListQuery } from './admin-schemas';

type UserAdminContext = Pick<IdentityContext, 'users' | 'consents' | 'subjects' | 'sessions' | 'audit' | 'logger'>;

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
const cursorOf = (username: string) => Buffer.from(username).toString('base64url');
const usernameOf = (cursor: string) => Buffer.from(cursor, 'base64url').toString();

/**
 * Users: create, list (by username, paged), show (with consents), update, disable and enable, delete,
 * reset the password, withdraw a consent. Each change drops the cached rows on every replica.
 */
export function userAdminRoutes(router: Router, ctx: UserAdminContext): void {
  const audit = (req: Request, res: Response, type: string, userId: string, detail?: Record<string, unknown>) =>
    ctx.audit.record({ type, actor: operatorActor(req, res), subject: userId, detail });

  router.post('/users', async (req, res) => {
    const body = validate(createUserSchema, req.body);
    const user = await ctx.users.insert({
      id: newUserId(),
      username: body.username,
      passwordHash: await hashPassword(body.password),
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
    res.status(201).json({ user_id: user.id, username: user.username, verification_level: user.verificationLevel });
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

  router.get('/users/:id', async (req, res) => {
    const user = await ctx.users.findById(req.params.id);
    if (!user) throw noUser();
    const consents = await ctx.consents.listForUser(user.id);
    res.json({
      ...userJson(user),
      consents: consents.map((c) => ({ app_id: c.appId, scopes: c.scopes, granted_at: c.grantedAt.toISOString() })),
    });
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
    router.post(`/users/:id/${action}`, async (req, res) => {
      const user = await ctx.users.setDisabled(req.params.id, disabled);
      if (!user) throw noUser();
      // a disabled user's sessions end (their apps are told through back-channel logout)
      if (disabled) await ctx.sessions.endAll(user.id);
      await audit(req, res, disabled ? 'user.disabled' : 'user.enabled', user.id);
      res.json(userJson(user));
    });
  }

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

  router.post('/users/:id/reset-password', async (req, res) => {
    const body = validate(resetPasswordSchema, req.body ?? {});
    const password = body.password ?? randomBytes(18).toString('base64url');
    if (!(await ctx.users.setPasswordHash(req.params.id, await hashPassword(password)))) throw noUser();
    await audit(req, res, 'user.password_reset', req.params.id, { generated: body.password === undefined });
    res.json({ user_id: req.params.id, ...(body.password === undefined ? { password } : {}) });
  });

  router.delete('/users/:id/consents/:appId', async (req, res) => {
    const withdrawn = await ctx.consents.withdraw(req.params.id, req.params.appId);
    if (!withdrawn) throw errors.notFound('No consent of this user for this app.', 'app_id');
    ctx.logger.info('consent withdrawn', { user_id: req.params.id, app_id: req.params.appId });
    await audit(req, res, 'consent.withdrawn', req.params.id, { app_id: req.params.appId });
    res.status(204).end();
  });
}
