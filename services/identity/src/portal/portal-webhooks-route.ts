import type { Request, Response, Router } from 'express';
import { AppError, endpoint, type EndpointDocs } from '@attest/common';
import { frameOf, portalActor, portalLocals, requireRole } from './portal-guard';
import type { DeliveryView, WebhookFields, WebhookView } from './transactions-admin';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import { portalErrorPage } from './portal-pages';
import { webhookPage, webhooksPage, type WebhookPageInput } from './portal-webhook-pages';
import { checkedValue } from '../kernel/form-check';
import { PORTAL_FORMS } from './portal-forms';
import { portalWebhookDocs as docs } from './portal-webhooks-route.openapi';
import type { PortalDeps, PortalGuardDeps, PortalServices } from './portal-deps';
import { noticeOf, type PortalForm } from './portal-notice';

const DELIVERY_LOG_LIMIT = 50;

/**
 * The form's event types: the ticked checkboxes (the field repeated), or, as the form used to send them, one
 * text of types one per line or comma-separated; the list the webhook API takes.
 */
const eventTypes = (value: string[] | undefined) =>
  (value ?? [])
    .flatMap((v) => v.split(/[\r\n,]+/))
    .map((t) => t.trim())
    .filter(Boolean);

/** A field that may be given once or repeated (checkboxes), as its schema reads it; undefined when it fails it. */
const checkedList = (schema: keyof typeof PORTAL_FORMS, body: unknown, name: string): string[] | undefined => {
  const raw = ((body ?? {}) as Record<string, unknown>)[name];
  if (raw === undefined || raw === '') return undefined;
  const { value, error } = PORTAL_FORMS[schema].extract(name).validate(raw) as { value: unknown; error?: unknown };
  if (error) return undefined;
  return Array.isArray(value) ? value.map(String) : [String(value)];
};

/** The form's `since`: a datetime-local value (2026-01-31T12:00) read as UTC, or an ISO 8601 time as given. */
export function sinceOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(v) ? `${v}Z` : v;
}

/** The transactions service's refusal (a bad url, an unknown event type, a disabled endpoint…), or null. */
const refusalOf = (err: unknown): AppError | null => (err instanceof AppError ? err : null);

/** What the webhook pages use: the guard's, the audit trail, the transactions admin API. */
export type PortalWebhookDeps = PortalGuardDeps & Pick<PortalDeps, 'audit'> & Pick<PortalServices, 'transactionsAdmin'>;

/**
 * An app's webhook endpoints in the portal (issue 27): the operations of the app API's
 * /api/v2/client/webhooks, run by the transactions service's admin API on the same WebhookService; each
 * change audited here under the person's name. An endpoint of another app is 404, as no endpoint.
 */
export function portalWebhookRoutes(router: Router, deps: PortalWebhookDeps, form: PortalForm): void {
  const tx = deps.transactionsAdmin;
  const locals = (res: Response) => portalLocals(res) as { app: App; role: MemberRole };
  const audit = async (req: Request, res: Response, type: string, subject: string, extra: Record<string, unknown>) => {
    const { actor, detail } = portalActor(req, res);
    await deps.audit.record({ type, actor, subject, detail: { ...detail, app_id: locals(res).app.id, ...extra } });
  };
  const fields = (req: Request, schema: 'addWebhook' | 'webhookSettings') => {
    const value = (name: string) => checkedValue(PORTAL_FORMS[schema], req.body, name);
    return {
      url: value('url'),
      description: value('description'),
      enabled_events: eventTypes(checkedList(schema, req.body, 'enabled_events')),
    };
  };
  const asFields = (f: ReturnType<typeof fields>): WebhookFields => ({
    ...(f.url !== undefined ? { url: f.url.trim() } : {}),
    description: f.description?.trim() || null,
    enabled_events: f.enabled_events,
  });

  const renderList = async (
    req: Request,
    res: Response,
    extra: { notice?: string; error?: string; created?: { webhook: WebhookView; secret: string } } = {},
    status = 200,
    sent?: ReturnType<typeof fields>,
  ) => {
    const { app, role } = locals(res);
    let webhooks: WebhookView[] | null = null;
    let error = extra.error;
    try {
      webhooks = await tx.listWebhooks(app.id);
    } catch (err) {
      const refused = refusalOf(err);
      if (!refused) throw err;
      error ??= refused.detail;
      status = status === 200 ? refused.status : status;
    }
    webhooksPage(
      res,
      frameOf(deps, req, res, { notice: extra.notice, error }),
      { app, role, webhooks, created: extra.created, form: sent },
      status,
    );
  };

  /**
   * The endpoint of the path when it is this app's; otherwise the 404 page, or the transactions service's
   * refusal on a page (and null).
   */
  const owned = async (req: Request, res: Response): Promise<WebhookView | null> => {
    const id = String(req.params.webhook_id);
    let found: WebhookView | undefined;
    try {
      found = /^wh_[0-9a-f]{32}$/.test(id)
        ? (await tx.listWebhooks(locals(res).app.id)).find((w) => w.webhook_id === id)
        : undefined;
    } catch (err) {
      const refused = refusalOf(err);
      if (!refused) throw err;
      portalErrorPage(res, refused.status, frameOf(deps, req, res), 'Webhooks unavailable', refused.detail);
      return null;
    }
    if (found) return found;
    portalErrorPage(
      res,
      404,
      frameOf(deps, req, res),
      'No such webhook endpoint',
      'This app has no webhook endpoint here (it may have been removed).',
    );
    return null;
  };

  const renderOne = async (
    req: Request,
    res: Response,
    webhook: WebhookView,
    extra: { notice?: string; error?: string } & Pick<WebhookPageInput, 'secret' | 'form' | 'since'> = {},
    status = 200,
  ) => {
    const { app, role } = locals(res);
    let deliveries: DeliveryView[] | null = null;
    let error = extra.error;
    try {
      deliveries = await tx.deliveries(webhook.webhook_id, DELIVERY_LOG_LIMIT);
    } catch (err) {
      const refused = refusalOf(err);
      if (!refused) throw err;
      error ??= refused.detail;
    }
    webhookPage(
      res,
      frameOf(deps, req, res, { notice: extra.notice, error }),
      { app, role, webhook, deliveries, secret: extra.secret, form: extra.form, since: extra.since },
      status,
    );
  };

  /** Runs a change of the endpoint of the path; a refusal is shown on its page with its status. */
  const change =
    (
      run: (
        req: Request,
        res: Response,
        webhook: WebhookView,
      ) => Promise<{ notice?: string; secret?: string; redirect?: string } | void>,
      refusedExtra: (req: Request) => Pick<WebhookPageInput, 'form' | 'since'> = () => ({}),
    ) =>
    async (req: Request, res: Response) => {
      const webhook = await owned(req, res);
      if (!webhook) return;
      let result: { notice?: string; secret?: string; redirect?: string } | void;
      try {
        result = await run(req, res, webhook);
      } catch (err) {
        const refused = refusalOf(err);
        if (!refused) throw err;
        return renderOne(req, res, webhook, { error: refused.detail, ...refusedExtra(req) }, refused.status);
      }
      if (result?.redirect) return res.redirect(303, result.redirect);
      const fresh = (await tx.listWebhooks(locals(res).app.id)).find((w) => w.webhook_id === webhook.webhook_id);
      await renderOne(req, res, fresh ?? webhook, { notice: result?.notice, secret: result?.secret });
    };
  const pageOf = (res: Response, webhook: WebhookView, notice: string) =>
    `/portal/apps/${locals(res).app.id}/webhooks/${webhook.webhook_id}?notice=${notice}`;

  const add = async (req: Request, res: Response) => {
    const sent = fields(req, 'addWebhook');
    if (!sent.url) return renderList(req, res, { error: 'Give the endpoint’s URL (url).' }, 400, sent);
    let created: WebhookView & { secret: string };
    try {
      created = await tx.addWebhook(locals(res).app.id, { ...asFields(sent), url: sent.url.trim() });
    } catch (err) {
      const refused = refusalOf(err);
      if (!refused) throw err;
      return renderList(req, res, { error: refused.detail }, refused.status, sent);
    }
    const { secret, ...webhook } = created;
    await audit(req, res, 'webhook.added', webhook.webhook_id, {
      url: webhook.url,
      enabled_events: webhook.enabled_events,
    });
    await renderList(req, res, { created: { webhook, secret } });
  };

  const settings = change(
    async (req, res, webhook) => {
      const sent = fields(req, 'webhookSettings');
      if (!sent.url) throw new AppError('required', 400, 'Give the endpoint’s URL (url).', 'url');
      const patch = asFields(sent);
      await tx.updateWebhook(webhook.webhook_id, patch);
      await audit(req, res, 'webhook.updated', webhook.webhook_id, { changed: Object.keys(patch) });
      return { redirect: pageOf(res, webhook, 'webhook-saved') };
    },
    (req) => ({ form: fields(req, 'webhookSettings') }),
  );

  const rotate = change(async (req, res, webhook) => {
    const { secret } = await tx.rotateWebhookSecret(webhook.webhook_id);
    await audit(req, res, 'webhook.secret_rotated', webhook.webhook_id, {});
    return { notice: 'New signing secret made; the previous one still signs for 24 hours.', secret };
  });

  const setEnabled = (enabled: boolean) =>
    change(async (req, res, webhook) => {
      await tx.setWebhookEnabled(webhook.webhook_id, enabled);
      if ((webhook.status === 'disabled') === enabled)
        await audit(req, res, enabled ? 'webhook.enabled' : 'webhook.disabled', webhook.webhook_id, {});
      return { redirect: pageOf(res, webhook, enabled ? 'webhook-enabled' : 'webhook-disabled') };
    });

  const test = change(async (req, res, webhook) => {
    const sent = await tx.sendTestEvent(webhook.webhook_id);
    await audit(req, res, 'webhook.test_sent', webhook.webhook_id, { event_id: sent.event_id });
    return { redirect: pageOf(res, webhook, 'test-sent') };
  });

  const recover = change(
    async (req, res, webhook) => {
      const since = sinceOf(checkedValue(PORTAL_FORMS.recoverWebhook, req.body, 'since'));
      if (!since) throw new AppError('required', 400, 'Give the time to recover from (since).', 'since');
      const result = await tx.recoverWebhook(webhook.webhook_id, since);
      await audit(req, res, 'webhook.recovered', webhook.webhook_id, {
        since: result.since,
        deliveries: result.deliveries,
      });
      return {
        notice:
          result.deliveries === 0
            ? `No failed delivery since ${result.since} to send again.`
            : `${result.deliveries} failed deliver${result.deliveries === 1 ? 'y' : 'ies'} since ${result.since} queued again.`,
      };
    },
    (req) => ({ since: checkedValue(PORTAL_FORMS.recoverWebhook, req.body, 'since') }),
  );

  const redeliver = change(async (req, res, webhook) => {
    const deliveryId = checkedValue(PORTAL_FORMS.redeliver, req.body, 'delivery_id') ?? '';
    // only a delivery to this endpoint: another's is "no such delivery" here
    const log = await tx.deliveries(webhook.webhook_id, DELIVERY_LOG_LIMIT);
    if (!log.some((d) => d.delivery_id === deliveryId))
      throw new AppError('not_found', 404, 'This endpoint has no such delivery.', 'delivery_id');
    const again = await tx.redeliver(deliveryId);
    await audit(req, res, 'webhook.redelivered', webhook.webhook_id, {
      delivery_id: deliveryId,
      event_id: again.event_id,
    });
    return { redirect: pageOf(res, webhook, 'redelivered') };
  });

  const remove = change(async (req, res, webhook) => {
    await tx.removeWebhook(webhook.webhook_id);
    await audit(req, res, 'webhook.removed', webhook.webhook_id, { url: webhook.url });
    return { redirect: `/portal/apps/${locals(res).app.id}/webhooks?notice=webhook-removed` };
  });

  const show = async (req: Request, res: Response) => {
    const webhook = await owned(req, res);
    if (webhook) await renderOne(req, res, webhook, { notice: noticeOf(req) });
  };

  const signedIn = form(PORTAL_FORMS.appAction).slice(0, 2);
  endpoint(
    router,
    '/portal/apps/:id/webhooks',
    {
      GET: [...signedIn, requireRole(deps, 'viewer'), (req, res) => renderList(req, res, { notice: noticeOf(req) })],
      POST: [...form(PORTAL_FORMS.addWebhook), requireRole(deps, 'developer'), add],
    },
    { ...docs.webhooks, ...docs.addWebhook } as EndpointDocs,
  );
  endpoint(
    router,
    '/portal/apps/:id/webhooks/:webhook_id',
    { GET: [...signedIn, requireRole(deps, 'viewer'), show] },
    docs.webhook,
  );
  const post = (
    path: string,
    schema: keyof typeof PORTAL_FORMS,
    handler: (req: Request, res: Response) => Promise<unknown>,
    doc: EndpointDocs,
  ) =>
    endpoint(
      router,
      `/portal/apps/:id/webhooks/:webhook_id/${path}`,
      { POST: [...form(PORTAL_FORMS[schema]), requireRole(deps, 'developer'), handler] },
      doc,
    );
  post('settings', 'webhookSettings', settings, docs.webhookSettings);
  post('rotate-secret', 'appAction', rotate, docs.webhookRotate);
  post('enable', 'appAction', setEnabled(true), docs.webhookEnable);
  post('disable', 'appAction', setEnabled(false), docs.webhookDisable);
  post('test', 'appAction', test, docs.webhookTest);
  post('recover', 'recoverWebhook', recover, docs.webhookRecover);
  post('redeliver', 'redeliver', redeliver, docs.webhookRedeliver);
  post('remove', 'appAction', remove, docs.webhookRemove);
}
