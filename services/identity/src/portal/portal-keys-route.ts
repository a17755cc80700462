import type { Request, Response, Router } from 'express';
import { AppError, endpoint, type EndpointDocs } from '@attest/common';
import { frameOf, portalActor, portalLocals, requireRole } from './portal-guard';
import type { ApiKeyView } from './transactions-admin';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import { keysPage } from './portal-pages';
import { checkedValue } from '../kernel/form-check';
import { PORTAL_FORMS } from './portal-forms';
import { portalKeyDocs as docs } from './portal-keys-route.openapi';
import type { PortalDeps, PortalGuardDeps, PortalServices } from './portal-deps';
import { noticeOf, type PortalForm } from './portal-notice';

/** What the API keys pages use: the guard's, the audit trail, the transactions admin API. */
export type PortalKeyDeps = PortalGuardDeps & Pick<PortalDeps, 'audit'> & Pick<PortalServices, 'transactionsAdmin'>;

/**
 * An app's API keys in the portal. They live in the transactions service: the portal calls its admin
 * API (the operations `pnpm manage api-key` uses), and records here who asked for each change.
 */
export function portalKeyRoutes(router: Router, deps: PortalKeyDeps, form: PortalForm): void {
  const render = async (
    req: Request,
    res: Response,
    extra: { notice?: string; error?: string; created?: { api_key: string; name: string | null } } = {},
    status = 200,
  ) => {
    const { app, role } = portalLocals(res) as { app: App; role: MemberRole };
    let keys: ApiKeyView[] | null = null;
    let error = extra.error;
    try {
      keys = await deps.transactionsAdmin.listKeys(app.id);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      error ??= err.detail;
      status = status === 200 ? err.status : status;
    }
    keysPage(
      res,
      frameOf(deps, req, res, { notice: extra.notice, error }),
      { app, role, keys, created: extra.created },
      status,
    );
  };

  const create = async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const { actor, detail } = portalActor(req, res);
    const name = checkedValue(PORTAL_FORMS.createKey, req.body, 'name')?.trim().slice(0, 200) || null;
    let created: ApiKeyView & { api_key: string };
    try {
      created = await deps.transactionsAdmin.createKey(app.id, name);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return render(req, res, { error: err.detail }, err.status);
    }
    await deps.audit.record({
      type: 'api_key.created',
      actor,
      subject: created.key_id,
      detail: { ...detail, app_id: app.id, name },
    });
    await render(req, res, { created: { api_key: created.api_key, name } });
  };

  const revoke = async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const { actor, detail } = portalActor(req, res);
    const keyId = checkedValue(PORTAL_FORMS.revokeKey, req.body, 'key_id') ?? '';
    try {
      // only a key of this app: another app's key id is "no such key" here
      const keys = await deps.transactionsAdmin.listKeys(app.id);
      if (!keys.some((k) => k.key_id === keyId && !k.revoked_at))
        return render(req, res, { error: 'This app has no such API key (or it is already revoked).' }, 404);
      await deps.transactionsAdmin.revokeKey(keyId);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return render(req, res, { error: err.detail }, err.status);
    }
    await deps.audit.record({ type: 'api_key.revoked', actor, subject: keyId, detail: { ...detail, app_id: app.id } });
    res.redirect(303, `/portal/apps/${app.id}/keys?notice=key-revoked`);
  };

  const signedIn = form(PORTAL_FORMS.appAction).slice(0, 2);
  endpoint(
    router,
    '/portal/apps/:id/keys',
    {
      GET: [...signedIn, requireRole(deps, 'viewer'), (req, res) => render(req, res, { notice: noticeOf(req) })],
      POST: [...form(PORTAL_FORMS.createKey), requireRole(deps, 'developer'), create],
    },
    { ...docs.keys, ...docs.createKey } as EndpointDocs,
  );
  endpoint(
    router,
    '/portal/apps/:id/keys/revoke',
    { POST: [...form(PORTAL_FORMS.revokeKey), requireRole(deps, 'developer'), revoke] },
    docs.revokeKey,
  );
}
