import type { Request, Response, Router } from 'express';
import { errors, operatorActor, validate } from '@attest/common';
import { hashClientSecret, newAppId, newClientSecret } from '../domain/ids';
import type { IdentityContext } from '../routes/context';
import type { App, AppUpdate } from '../store/app-store';
import { appListQuery, createAppSchema, updateAppSchema } from './admin-schemas';

type AppAdminContext = Pick<IdentityContext, 'apps' | 'audit' | 'config' | 'logger'>;

export const appJson = (app: App) => ({
  app_id: app.id,
  name: app.name,
  redirect_uris: app.redirectUris,
  token_endpoint_auth_method: app.public ? 'none' : 'client_secret_basic',
  web_origins: app.webOrigins,
  post_logout_redirect_uris: app.postLogoutRedirectUris,
  backchannel_logout_uri: app.backchannelLogoutUri,
  created_at: app.createdAt.toISOString(),
  disabled: app.disabledAt !== null,
  disabled_at: app.disabledAt?.toISOString() ?? null,
});

const publicClientHasNoSecret = () =>
  errors.conflict(
    'public_client',
    'This app is a public client (token_endpoint_auth_method none): it has no secret.',
    'app_id',
  );

const noApp = () => errors.notFound('No app with this app_id.', 'app_id');

/** Apps: create, list (paged), show, update, rotate the secret, disable and enable. */
export function appAdminRoutes(router: Router, ctx: AppAdminContext): void {
  const audit = (req: Request, res: Response, type: string, appId: string, detail?: Record<string, unknown>) =>
    ctx.audit.record({ type, actor: operatorActor(req, res), subject: appId, detail });

  router.post('/apps', async (req, res) => {
    const body = validate(createAppSchema, req.body);
    const secret = body.token_endpoint_auth_method === 'none' ? null : newClientSecret();
    const app = await ctx.apps.insert({
      id: newAppId(),
      name: body.name,
      secretHash: secret && hashClientSecret(ctx.config.secret, secret),
      redirectUris: body.redirect_uris,
      webOrigins: body.web_origins,
      postLogoutRedirectUris: body.post_logout_redirect_uris,
      backchannelLogoutUri: body.backchannel_logout_uri,
    });
    ctx.logger.info('app created', { app_id: app.id, public: app.public });
    await audit(req, res, 'app.created', app.id, {
      name: app.name,
      redirect_uris: app.redirectUris,
      post_logout_redirect_uris: app.postLogoutRedirectUris,
      backchannel_logout_uri: app.backchannelLogoutUri,
    });
    res.status(201).json({ ...appJson(app), ...(secret ? { client_secret: secret } : {}) });
  });

  router.get('/apps', async (req, res) => {
    const q = validate(appListQuery, req.query);
    const apps = await ctx.apps.list({ after: q.cursor, limit: q.limit + 1 });
    const page = apps.slice(0, q.limit);
    res.json({ apps: page.map(appJson), next_cursor: apps.length > q.limit ? page[page.length - 1].id : null });
  });

  router.get('/apps/:id', async (req, res) => {
    const app = await ctx.apps.find(req.params.id);
    if (!app) throw noApp();
    res.json(appJson(app));
  });

  router.patch('/apps/:id', async (req, res) => {
    const body = validate(updateAppSchema, req.body);
    const changes: AppUpdate = {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.redirect_uris === undefined ? {} : { redirectUris: body.redirect_uris }),
      ...(body.web_origins === undefined ? {} : { webOrigins: body.web_origins }),
      ...(body.post_logout_redirect_uris === undefined
        ? {}
        : { postLogoutRedirectUris: body.post_logout_redirect_uris }),
      ...(body.backchannel_logout_uri === undefined ? {} : { backchannelLogoutUri: body.backchannel_logout_uri }),
    };
    const app = await ctx.apps.update(req.params.id, changes);
    if (!app) throw noApp();
    await audit(req, res, 'app.updated', app.id, { changed: Object.keys(body), ...body });
    res.json(appJson(app));
  });

  router.post('/apps/:id/rotate-secret', async (req, res) => {
    if ((await ctx.apps.find(req.params.id))?.public) throw publicClientHasNoSecret();
    const secret = newClientSecret();
    if (!(await ctx.apps.setSecretHash(req.params.id, hashClientSecret(ctx.config.secret, secret)))) throw noApp();
    ctx.logger.info('app secret rotated', { app_id: req.params.id });
    await audit(req, res, 'app.secret_rotated', req.params.id);
    res.json({ app_id: req.params.id, client_secret: secret });
  });

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    router.post(`/apps/:id/${action}`, async (req, res) => {
      const app = await ctx.apps.setDisabled(req.params.id, disabled);
      if (!app) throw noApp();
      await audit(req, res, disabled ? 'app.disabled' : 'app.enabled', app.id);
      res.json(appJson(app));
    });
  }
}
