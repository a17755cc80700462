import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { errors, validate } from '@attest/common';
import { hashPassword } from '../domain/crypto';
import { hashClientSecret, newAppId, newClientSecret, newUserId } from '../domain/ids';
import type { Session } from '../domain/sessions';
import type { App } from '../store/app-store';
import type { IdentityContext } from '../routes/context';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https, or http on a loopback host for development; absolute, no fragment. */
export function redirectUriProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.hash || value.includes('#')) return 'must not contain a fragment';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return null;
  return 'must use https (http is allowed only on localhost, 127.0.0.1 or [::1])';
}

const redirectUri = Joi.string()
  .max(2000)
  .custom((value: string, helpers) => {
    const problem = redirectUriProblem(value);
    return problem ? helpers.message({ custom: `redirect_uris ${problem}: ${value}` }) : value;
  });

const appUri = (field: string) =>
  Joi.string()
    .max(2000)
    .custom((value: string, helpers) => {
      const problem = redirectUriProblem(value);
      return problem ? helpers.message({ custom: `${field} ${problem}: ${value}` }) : value;
    });

/** RP-Initiated and Back-Channel Logout registration (OpenID Connect client metadata names). */
const logoutSettings = {
  post_logout_redirect_uris: Joi.array().items(appUri('post_logout_redirect_uris')).max(50).unique(),
  backchannel_logout_uri: appUri('backchannel_logout_uri').allow(null),
};

const createAppSchema = Joi.object({
  name: Joi.string().trim().min(1).max(200).required(),
  redirect_uris: Joi.array().items(redirectUri).min(1).max(50).unique().required(),
  ...logoutSettings,
});

const updateAppSchema = Joi.object(logoutSettings).min(1);

const createUserSchema = Joi.object({
  username: Joi.string().trim().min(1).max(200).required(),
  password: Joi.string().min(8).max(1024).required().messages({ 'string.min': 'password must be at least 8 characters' }),
  verification_level: Joi.string().valid('orb', 'device').required(),
  name: Joi.string().trim().max(200).allow(null),
  given_name: Joi.string().trim().max(200).allow(null),
  family_name: Joi.string().trim().max(200).allow(null),
});

const updateUserSchema = Joi.object({
  verification_level: Joi.string().valid('orb', 'device'),
  name: Joi.string().trim().max(200).allow(null),
  given_name: Joi.string().trim().max(200).allow(null),
  family_name: Joi.string().trim().max(200).allow(null),
}).min(1);

const publicApp = (app: App) => ({
  app_id: app.id,
  name: app.name,
  redirect_uris: app.redirectUris,
  post_logout_redirect_uris: app.postLogoutRedirectUris,
  backchannel_logout_uri: app.backchannelLogoutUri,
  created_at: app.createdAt.toISOString(),
  disabled: app.disabledAt !== null,
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

/** Admin API (admin port only): apps, users, signing keys. */
export function identityAdminRoutes(router: Router, ctx: IdentityContext): void {
  router.post('/apps', async (req: Request, res: Response) => {
    const body = validate(createAppSchema, req.body);
    const secret = newClientSecret();
    const app = await ctx.apps.insert({
      id: newAppId(),
      name: body.name,
      secretHash: hashClientSecret(ctx.config.secret, secret),
      redirectUris: body.redirect_uris,
      postLogoutRedirectUris: body.post_logout_redirect_uris,
      backchannelLogoutUri: body.backchannel_logout_uri,
    });
    ctx.logger.info('app created', { app_id: app.id });
    res.status(201).json({
      app_id: app.id,
      client_secret: secret,
      redirect_uris: app.redirectUris,
      post_logout_redirect_uris: app.postLogoutRedirectUris,
      backchannel_logout_uri: app.backchannelLogoutUri,
      name: app.name,
    });
  });

  router.get('/apps', async (_req, res) => void res.json((await ctx.apps.list()).map(publicApp)));

  router.get('/apps/:id', async (req, res) => {
    const app = await ctx.apps.find(req.params.id);
    if (!app) throw errors.notFound('No app with this app_id.', 'app_id');
    res.json(publicApp(app));
  });

  router.post('/apps/:id/rotate-secret', async (req, res) => {
    const secret = newClientSecret();
    if (!(await ctx.apps.setSecretHash(req.params.id, hashClientSecret(ctx.config.secret, secret)))) throw errors.notFound('No app with this app_id.', 'app_id');
    ctx.logger.info('app secret rotated', { app_id: req.params.id });
    res.json({ app_id: req.params.id, client_secret: secret });
  });

  for (const [action, disabled] of [['disable', true], ['enable', false]] as const) {
    router.post(`/apps/:id/${action}`, async (req, res) => {
      const app = await ctx.apps.setDisabled(req.params.id, disabled);
      if (!app) throw errors.notFound('No app with this app_id.', 'app_id');
      res.json(publicApp(app));
    });
  }

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
    res.status(201).json({ user_id: user.id, username: user.username, verification_level: user.verificationLevel });
  });

  router.get('/keys', async (_req, res) => void res.json({ keys: await ctx.keys.jwks() }));

  identityAdminChanges(router, ctx);
}

/** Changes that in-process caches must see at once (the directories invalidate after the commit). */
function identityAdminChanges(router: Router, ctx: IdentityContext): void {
  router.patch('/users/:id', async (req, res) => {
    const body = validate(updateUserSchema, req.body);
    const user = await ctx.users.update(req.params.id, {
      ...(body.verification_level === undefined ? {} : { verificationLevel: body.verification_level }),
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.given_name === undefined ? {} : { givenName: body.given_name }),
      ...(body.family_name === undefined ? {} : { familyName: body.family_name }),
    });
    if (!user) throw errors.notFound('No user with this user_id.', 'user_id');
    res.json({ user_id: user.id, username: user.username, verification_level: user.verificationLevel });
  });

  router.patch('/apps/:id', async (req, res) => {
    const body = validate(updateAppSchema, req.body);
    const app = await ctx.apps.setLogoutSettings(req.params.id, {
      postLogoutRedirectUris: body.post_logout_redirect_uris,
      backchannelLogoutUri: body.backchannel_logout_uri,
    });
    if (!app) throw errors.notFound('No app with this app_id.', 'app_id');
    res.json(publicApp(app));
  });

  router.get('/users/:id/sessions', async (req, res) => {
    res.json((await ctx.sessions.listForUser(req.params.id)).map(publicSession));
  });

  router.delete('/users/:id/sessions/:sessionId', async (req, res) => {
    if (!(await ctx.sessions.end(req.params.id, req.params.sessionId))) throw errors.notFound('No such session of this user.', 'session_id');
    ctx.logger.info('session ended', { user_id: req.params.id, by: 'admin' });
    res.status(204).end();
  });

  router.delete('/users/:id/sessions', async (req, res) => {
    const ended = await ctx.sessions.endAll(req.params.id);
    ctx.logger.info('sessions ended', { user_id: req.params.id, count: ended, by: 'admin' });
    res.json({ ended });
  });

  router.delete('/users/:id/consents/:appId', async (req, res) => {
    const withdrawn = await ctx.consents.withdraw(req.params.id, req.params.appId);
    if (!withdrawn) throw errors.notFound('No consent of this user for this app.', 'app_id');
    ctx.logger.info('consent withdrawn', { user_id: req.params.id, app_id: req.params.appId });
    res.status(204).end();
  });

  router.post('/keys/rotate', async (_req, res) => void res.json(await ctx.keys.rotate()));
}
