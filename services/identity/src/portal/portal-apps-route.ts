import type { Request, Response, Router } from 'express';
import { AppError, endpoint, type EndpointDocs } from '@attest/common';
import { createApp, rotateAppSecret, setAppDisabled, updateApp } from '../admin';
import { frameOf, portalActor, portalLocals, requireRole } from './portal-guard';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import { appsPage, insightPage, portalErrorPage } from './portal-pages';
import { appPage, sectionPath, type AppSection } from './portal-app-pages';
import { checkedValue, firstFailure } from '../kernel/form-check';
import { PORTAL_FORMS } from './portal-forms';
import { portalAppDocs as docs } from './portal-apps-route.openapi';
import type { PortalDeps, PortalGuardDeps, PortalServices } from './portal-deps';
import { noticeOf, type PortalForm } from './portal-notice';

const INSIGHT_DAYS = 30;

/** A textarea of one value per line, as a list (blank lines dropped). */
const listOf = (value: string | undefined) =>
  value === undefined
    ? undefined
    : value
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter(Boolean);

/** A settings page (section) of the person's app, with what went wrong or a secret shown once. */
async function showApp(
  deps: PortalAppDeps,
  req: Request,
  res: Response,
  section: AppSection,
  extra: { notice?: string; error?: string; secret?: string } = {},
  status = 200,
): Promise<void> {
  const { app, role } = portalLocals(res) as { app: App; role: MemberRole };
  const fresh = (await deps.apps.find(app.id)) ?? app;
  appPage(
    res,
    frameOf(deps, req, res, { notice: extra.notice, error: extra.error }),
    section,
    { app: fresh, role, members: await deps.teams.list(app.id), issuer: deps.config.issuer, secret: extra.secret },
    status,
  );
}

/** The fields of the security page's form: a post that carries none of them leaves them as they are. */
const SECURITY_FIELDS = [
  'min_verification_level',
  'id_token_signed_response_alg',
  'dpop_bound_access_tokens',
  'require_pushed_authorization_requests',
  'profile',
  'jwks_uri',
] as const;

/** A domain refusal (bad value, last owner, no secret…) shown on the page, its status kept. */
const refusal = (err: unknown): AppError | null => (err instanceof AppError && err.status < 500 ? err : null);

/** What the app pages use: the guard's, the audit trail, the transactions admin API (disable) and insight. */
export type PortalAppDeps = PortalGuardDeps &
  Pick<PortalDeps, 'audit'> &
  Pick<PortalServices, 'transactionsAdmin' | 'insight'>;

/** The portal's app pages: the list's "create", an app's settings, secret, state, team and insight. */
export function portalAppRoutes(router: Router, deps: PortalAppDeps, form: PortalForm): void {
  const field = (req: Request, schema: keyof typeof PORTAL_FORMS, name: string) =>
    checkedValue(PORTAL_FORMS[schema], req.body, name);
  const done = (res: Response, appId: string, notice: string, section: AppSection) =>
    res.redirect(303, `${sectionPath(appId, section)}?notice=${notice}`);
  const member = (needed: MemberRole) => requireRole(deps, needed);

  const create = async (req: Request, res: Response) => {
    const { session } = portalLocals(res);
    if (!deps.config.portal.selfServiceApps)
      return portalErrorPage(
        res,
        403,
        frameOf(deps, req, res),
        'Creating apps is turned off',
        'Ask your operator to create the app and add you to its team (PORTAL_SELF_SERVICE_APPS is off).',
      );
    const { actor, detail } = portalActor(req, res);
    const body = {
      name: field(req, 'createApp', 'name'),
      redirect_uris: [field(req, 'createApp', 'redirect_uri') ?? ''],
      ...(field(req, 'createApp', 'kind') === 'public' ? { token_endpoint_auth_method: 'none' } : {}),
    };
    let created: { app: App; secret: string | null };
    try {
      created = await createApp(deps, body, actor, detail);
    } catch (err) {
      const refused = refusal(err);
      if (!refused) throw err;
      const memberships = await deps.teams.appsOf(session.user.id);
      const apps = (
        await Promise.all(memberships.map(async (m) => ({ app: await deps.apps.find(m.appId), role: m.role })))
      ).flatMap((m) => (m.app ? [{ app: m.app, role: m.role }] : []));
      return appsPage(
        res,
        frameOf(deps, req, res, { error: refused.detail }),
        { apps, selfService: true },
        refused.status,
      );
    }
    await deps.teams.put(created.app.id, session.user.username, 'owner', actor, detail);
    Object.assign(portalLocals(res), { app: created.app, role: 'owner' });
    // a new app's secret is shown once on its settings page, beside its client ID
    await showApp(deps, req, res, 'settings', {
      notice: 'App created. You are its owner.',
      secret: created.secret ?? undefined,
    });
  };

  const show = (section: AppSection) => (req: Request, res: Response) =>
    showApp(deps, req, res, section, { notice: noticeOf(req) });

  /** The settings page's fields (name, URIs), and the security page's when the form carries them (the one-page form did). */
  const generalFields = (req: Request) => {
    const value = (name: string) => field(req, 'settings', name);
    const backchannel = value('backchannel_logout_uri');
    return {
      name: value('name'),
      redirect_uris: listOf(value('redirect_uris')),
      post_logout_redirect_uris: listOf(value('post_logout_redirect_uris')) ?? [],
      web_origins: listOf(value('web_origins')) ?? [],
      backchannel_logout_uri: backchannel ? backchannel : null,
    };
  };
  const securityFields = (req: Request, app: App) => {
    const value = (name: string) => field(req, 'settings', name);
    const profile = value('profile');
    const jwksUri = value('jwks_uri');
    const fapi2 = profile === 'fapi2';
    return {
      min_verification_level: value('min_verification_level'),
      // under FAPI 2.0 the profile fixes these (PS256 unless ES256 is chosen; PAR and DPoP on)
      id_token_signed_response_alg:
        fapi2 && value('id_token_signed_response_alg') === 'RS256' ? undefined : value('id_token_signed_response_alg'),
      // a checkbox left unchecked is not sent: off
      dpop_bound_access_tokens: fapi2 ? undefined : value('dpop_bound_access_tokens') === 'true',
      require_pushed_authorization_requests: fapi2
        ? undefined
        : value('require_pushed_authorization_requests') === 'true',
      profile,
      // empty: no URL (an app with inline keys set by an operator keeps them)
      jwks_uri: app.public || (jwksUri ?? '') === (app.jwksUri ?? '') ? undefined : (jwksUri ?? null),
    };
  };
  /**
   * The agents and devices page's fields: the device flow (an unchecked box is off) and, for a confidential
   * app, CIBA's mode (none: off) and notification endpoint (empty: none). may_act_for_users is never read
   * from a portal form: the operator sets it.
   */
  const agentsFields = (req: Request, app: App) => {
    const value = (name: string) => field(req, 'agents', name);
    const mode = value('backchannel_token_delivery_mode');
    return {
      device_authorization_grant: value('device_authorization_grant') === 'true',
      ...(app.public
        ? {}
        : {
            backchannel_token_delivery_mode: mode === undefined ? undefined : mode === 'none' ? null : mode,
            backchannel_client_notification_endpoint: value('backchannel_client_notification_endpoint') ?? null,
          }),
    };
  };
  const carriesSecurity = (req: Request) =>
    SECURITY_FIELDS.some((n) => ((req.body ?? {}) as Record<string, unknown>)[n] !== undefined);

  /** Saves the settings page's form (settings), the security page's or the agents page's, landing back on it. */
  const save = (section: 'settings' | 'security' | 'agents') => async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const { actor, detail } = portalActor(req, res);
    // the agents page's values are few and closed: one that is not among them is named, not passed over
    const failure = section === 'agents' ? firstFailure(PORTAL_FORMS.agents, req.body) : null;
    if (failure) return showApp(deps, req, res, section, { error: `${failure.message}.` }, 400);
    const fields =
      section === 'agents'
        ? agentsFields(req, app)
        : {
            ...(section === 'settings' ? generalFields(req) : {}),
            ...(section === 'security' || carriesSecurity(req) ? securityFields(req, app) : {}),
          };
    const body = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    try {
      await updateApp(deps, app.id, body, actor, detail);
    } catch (err) {
      const refused = refusal(err);
      if (!refused) throw err;
      return showApp(deps, req, res, section, { error: refused.detail }, refused.status);
    }
    done(res, app.id, 'saved', section);
  };

  const rotate = async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const { actor, detail } = portalActor(req, res);
    try {
      const secret = await rotateAppSecret(deps, app.id, actor, detail);
      await showApp(deps, req, res, 'security', {
        notice: 'New client secret made; the old one no longer works.',
        secret,
      });
    } catch (err) {
      const refused = refusal(err);
      if (!refused) throw err;
      await showApp(deps, req, res, 'security', { error: refused.detail }, refused.status);
    }
  };

  /** Both services, as `pnpm manage app disable` does: identity (sign-in, tokens), then transactions (keys). */
  const setState = (disabled: boolean) => async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const { actor, detail } = portalActor(req, res);
    await setAppDisabled(deps, app.id, disabled, actor, detail);
    if (deps.transactionsAdmin.configured) {
      try {
        await deps.transactionsAdmin.setAppDisabled(app.id, disabled);
      } catch (err) {
        const refused = refusal(err);
        if (!refused && !(err instanceof AppError)) throw err;
        return showApp(
          deps,
          req,
          res,
          'danger',
          {
            error: `The app was ${disabled ? 'disabled for sign-in' : 'enabled for sign-in'}, but its API keys were not: ${(err as AppError).detail} Try again.`,
          },
          503,
        );
      }
    }
    done(res, app.id, disabled ? 'disabled' : 'enabled', 'danger');
  };

  const addMember = async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const { actor, detail } = portalActor(req, res);
    const username = field(req, 'addMember', 'username');
    const role = field(req, 'addMember', 'role') as MemberRole | undefined;
    if (!username || !role)
      return showApp(
        deps,
        req,
        res,
        'team',
        { error: 'Give a username and a role (owner, developer or viewer).' },
        400,
      );
    try {
      await deps.teams.put(app.id, username.trim(), role, actor, detail);
    } catch (err) {
      const refused = refusal(err);
      if (!refused) throw err;
      const text = refused.attribute === 'username' ? `No user is called “${username}”.` : refused.detail;
      return showApp(deps, req, res, 'team', { error: text }, refused.status === 404 ? 400 : refused.status);
    }
    done(res, app.id, 'member-saved', 'team');
  };

  const removeMember = async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const { actor, detail } = portalActor(req, res);
    try {
      await deps.teams.remove(app.id, field(req, 'removeMember', 'user_id') ?? '', actor, detail);
    } catch (err) {
      const refused = refusal(err);
      if (!refused) throw err;
      return showApp(deps, req, res, 'team', { error: refused.detail }, refused.status === 404 ? 400 : refused.status);
    }
    done(res, app.id, 'member-removed', 'team');
  };

  const insight = async (req: Request, res: Response) => {
    const { app, role } = portalLocals(res) as { app: App; role: MemberRole };
    insightPage(res, frameOf(deps, req, res), { app, role, days: await deps.insight.daily(app.id, INSIGHT_DAYS) });
  };

  const signedIn = form(PORTAL_FORMS.appAction).slice(0, 2);
  endpoint(router, '/portal/apps', { POST: [...form(PORTAL_FORMS.createApp), create] }, docs.createApp);
  endpoint(router, '/portal/apps/:id', { GET: [...signedIn, member('viewer'), show('settings')] }, docs.app);
  endpoint(
    router,
    '/portal/apps/:id/security',
    {
      GET: [...signedIn, member('viewer'), show('security')],
      POST: [...form(PORTAL_FORMS.security), member('developer'), save('security')],
    },
    { ...docs.security, ...docs.saveSecurity } as EndpointDocs,
  );
  endpoint(
    router,
    '/portal/apps/:id/agents',
    {
      GET: [...signedIn, member('viewer'), show('agents')],
      POST: [...form(PORTAL_FORMS.agents), member('developer'), save('agents')],
    },
    { ...docs.agents, ...docs.saveAgents } as EndpointDocs,
  );
  endpoint(router, '/portal/apps/:id/team', { GET: [...signedIn, member('viewer'), show('team')] }, docs.team);
  endpoint(
    router,
    '/portal/apps/:id/danger-zone',
    { GET: [...signedIn, member('viewer'), show('danger')] },
    docs.danger,
  );
  endpoint(router, '/portal/apps/:id/insight', { GET: [...signedIn, member('viewer'), insight] }, docs.insight);
  const post = (
    path: string,
    schema: keyof typeof PORTAL_FORMS,
    needed: MemberRole,
    handler: (req: Request, res: Response) => Promise<unknown>,
    doc: keyof typeof docs,
  ) =>
    endpoint(
      router,
      `/portal/apps/:id${path}`,
      { POST: [...form(PORTAL_FORMS[schema]), member(needed), handler] },
      docs[doc],
    );
  post('/settings', 'settings', 'developer', save('settings'), 'settings');
  post('/rotate-secret', 'appAction', 'developer', rotate, 'rotateSecret');
  post('/disable', 'appAction', 'owner', setState(true), 'disable');
  post('/enable', 'appAction', 'owner', setState(false), 'enable');
  post('/members', 'addMember', 'owner', addMember, 'addMember');
  post('/members/remove', 'removeMember', 'owner', removeMember, 'removeMember');
}
