import type { Response } from 'express';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import type { DeliveryView, WebhookView } from './transactions-admin';
import { EVENT_TYPE_FAMILIES, SUBSCRIBABLE_EVENT_TYPES } from '@attest/common';
import { html, type Html } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';
import { appHeading, appNav, frame, shownOnce, when, type PortalFrame } from './portal-pages';

const STATUS_TEXT: Record<WebhookView['status'], string> = {
  enabled: 'enabled',
  failing: 'failing',
  disabled: 'disabled',
};

const statusBadge = (w: WebhookView) =>
  html`<span class="badge${w.status === 'enabled' ? '' : ' off'}" data-status="${w.status}">${STATUS_TEXT[w.status]}</span>`;

const filterText = (w: WebhookView) =>
  w.enabled_events.length ? w.enabled_events.join(', ') : html`<span class="muted">every event type</span>`;

/** A signing secret just made (on adding or rotating): shown this once. */
const secretBox = (secret: string) =>
  html`<div class="secret" role="status"><p><strong>The signing secret. Copy it now: it is shown only this once.</strong></p>
${shownOnce('webhook-secret', 'Signing secret', secret)}
<p class="muted">Verify each delivery’s <code>webhook-signature</code> with it (Standard Webhooks, e.g. the <a href="https://github.com/standard-webhooks/standard-webhooks">standardwebhooks</a> library).</p></div>`;

/** A checkbox's id for an event type or a family's wildcard: transaction.mined → event-transaction-mined. */
const eventBoxId = (type: string) => `event-${type.replace('.*', '-all').replace(/[^a-z0-9-]/gi, '-')}`;

/**
 * The event types an endpoint receives: a checkbox per known type (the transactions service's list, from
 * @attest/common), grouped by family, each family with an "every … event" box (`family.*`, new types of it
 * too). None ticked: every type.
 */
function eventsField(selected: string[], disabled: Html | ''): Html {
  const box = (value: string, label: Html | string, extra = '') =>
    html`<label class="inline${extra}" for="${eventBoxId(value)}"><input type="checkbox" id="${eventBoxId(value)}" name="enabled_events" value="${value}"${selected.includes(value) ? html` checked` : ''}${disabled}> ${label}</label>`;
  const families = EVENT_TYPE_FAMILIES.map(
    (
      family,
    ) => html`<div class="family" data-family="${family}">${box(`${family}.*`, html`Every <code>${family}</code> event`, ' all')}
${SUBSCRIBABLE_EVENT_TYPES.filter((t) => t.startsWith(`${family}.`)).map((t) => box(t, html`<code>${t}</code>`))}</div>`,
  );
  return html`<fieldset class="event-types" id="webhook-events" aria-describedby="webhook-events-hint"><legend>Event types</legend>
<p class="muted" id="webhook-events-hint">None ticked: every type, including new ones.</p>${families}</fieldset>`;
}

export interface WebhooksPageInput {
  app: App;
  role: MemberRole;
  /** null: the transactions service could not be asked (the error says why). */
  webhooks: WebhookView[] | null;
  created?: { webhook: WebhookView; secret: string };
  /** The add form as sent, when it was refused. */
  form?: { url?: string; description?: string; enabled_events?: string[] };
}

export function webhooksPage(res: Response, f: PortalFrame, input: WebhooksPageInput, status = 200): void {
  const { app, role } = input;
  const canEdit = role !== 'viewer';
  const base = `/portal/apps/${app.id}/webhooks`;
  const created = input.created
    ? html`<p>Endpoint <a href="${base}/${input.created.webhook.webhook_id}">${input.created.webhook.url}</a> added.</p>${secretBox(input.created.secret)}`
    : '';
  const list =
    input.webhooks === null
      ? ''
      : input.webhooks.length === 0
        ? html`<div class="empty" id="no-webhooks"><p><strong>This app has no webhook endpoint.</strong></p><p>${
            canEdit
              ? 'Add one below: an https URL of your backend that receives a signed POST for each event (a payment mined, a payment request paid…). Then send it a test event.'
              : 'A developer or owner of the app can add one. Events can also be read on the Events page.'
          }</p></div>`
        : html`<ul class="items" aria-labelledby="webhooks-heading">${input.webhooks.map(
            (
              w,
            ) => html`<li data-webhook="${w.webhook_id}"><span><a href="${base}/${w.webhook_id}"><strong>${w.url}</strong></a> ${statusBadge(w)}<br>
<span class="muted">${w.description ? html`${w.description} · ` : ''}events: ${filterText(w)} · added ${when(w.created_at)}</span></span></li>`,
          )}</ul>`;
  const v = input.form ?? {};
  const form = canEdit
    ? html`<h2 id="new-webhook-heading">Add an endpoint</h2>
<form method="post" action="${base}" aria-labelledby="new-webhook-heading">${hiddenFields({ csrf: f.csrf })}
<label for="webhook-url">URL</label><input id="webhook-url" name="url" type="url" required maxlength="2000" placeholder="https://shop.example.com/attest-webhooks" value="${v.url ?? ''}">
<label for="webhook-description">Description <span class="muted">(optional)</span></label><input id="webhook-description" name="description" maxlength="200" value="${v.description ?? ''}">
${eventsField(v.enabled_events ?? [], '')}
<button type="submit" id="add-webhook">Add the endpoint</button></form>`
    : html`<p class="muted" id="read-only">You are a viewer: you can see the endpoints and their deliveries but not change them.</p>`;
  frame(
    res,
    status,
    `Webhooks · ${app.name}`,
    f,
    html`${appHeading(app, role)}${appNav(app, 'webhooks')}<h2 id="webhooks-heading">Webhook endpoints</h2>${created}${list}${form}`,
  );
}

export interface WebhookPageInput {
  app: App;
  role: MemberRole;
  webhook: WebhookView;
  deliveries: DeliveryView[] | null;
  secret?: string;
  form?: { url?: string; description?: string; enabled_events?: string[] };
  /** The recover form's value as sent (refused). */
  since?: string;
}

type Attempt = DeliveryView['log'][number];

/** A body of an attempt, as the transactions service keeps it (its first 4096 characters or bytes). */
const bodyOf = (id: string, label: string, body: string | null, truncated: boolean) =>
  html`<p class="muted" id="${id}">${label}${truncated ? ' (its beginning: it was longer)' : ''}</p>${
    body === null
      ? html`<p class="muted" data-body="none">none: no answer came</p>`
      : body === ''
        ? html`<p class="muted" data-body="empty">empty</p>`
        : html`<pre class="body" tabindex="0" aria-labelledby="${id}"><code>${body}</code></pre>`
  }`;

/** An attempt: its line (when, status, error, how long it took), then the bodies sent and answered (no headers). */
const attemptRows = (deliveryId: string, a: Attempt) => {
  const id = `${deliveryId}-${a.attempt}`;
  return html`<tr data-attempt="${a.attempt}"><td>${a.attempt}</td><td>${when(a.started_at)}</td><td data-cell="status">${a.status_code ?? html`<span class="muted">none</span>`}</td><td>${a.error ?? ''}</td><td data-cell="duration">${a.latency_ms} ms</td></tr>
<tr class="bodies" data-bodies="${a.attempt}"><td colspan="5">${bodyOf(`request-${id}`, `Request body of attempt ${a.attempt}`, a.request_body, a.request_body_truncated)}${bodyOf(`response-${id}`, `Response body of attempt ${a.attempt}`, a.response_body, a.response_body_truncated)}</td></tr>`;
};

function deliveryItem(base: string, d: DeliveryView, csrf: ReturnType<typeof hiddenFields>, canEdit: boolean): Html {
  const outcome =
    d.status === 'succeeded'
      ? html`<span class="badge" data-status="succeeded">delivered</span>`
      : d.status === 'failed'
        ? html`<span class="badge off" data-status="failed">failed</span>`
        : html`<span class="badge off" data-status="pending">pending</span>`;
  return html`<li data-delivery="${d.delivery_id}"><div class="grow"><strong>${d.event_type}</strong> ${outcome}<br>
<span class="muted"><code>${d.event_id}</code> · ${when(d.created_at)} · ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${d.status === 'pending' && d.next_attempt_at ? html` · next ${when(d.next_attempt_at)}` : ''}</span>
${
  d.log.length
    ? html`<details><summary>Attempts</summary><div class="scroll" tabindex="0" role="region" aria-label="Attempts of delivery ${d.delivery_id}"><table><thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Response status</th><th scope="col">Error</th><th scope="col">Took</th></tr></thead>
<tbody>${d.log.map((a) => attemptRows(d.delivery_id, a))}</tbody></table></div></details>`
    : ''
}</div>
${canEdit ? html`<form method="post" action="${base}/redeliver">${csrf}${hiddenFields({ delivery_id: d.delivery_id })}<button type="submit" class="secondary" aria-label="Redeliver ${d.event_type} (${d.delivery_id})">Redeliver</button></form>` : ''}</li>`;
}

export function webhookPage(res: Response, f: PortalFrame, input: WebhookPageInput, status = 200): void {
  const { app, role, webhook: w } = input;
  const canEdit = role !== 'viewer';
  const csrf = hiddenFields({ csrf: f.csrf });
  const disabled = canEdit ? '' : html` disabled`;
  const base = `/portal/apps/${app.id}/webhooks/${w.webhook_id}`;
  const v = input.form ?? {};
  const facts = html`<dl class="facts"><dt>Status</dt><dd id="webhook-status">${statusBadge(w)}${
    w.disabled_reason ? html` <span class="muted">${w.disabled_reason}</span>` : ''
  }</dd>
<dt>Events</dt><dd id="webhook-filter">${filterText(w)}</dd>
<dt>Added</dt><dd>${when(w.created_at)}</dd>
${w.failing_since ? html`<dt>Failing since</dt><dd>${when(w.failing_since)} (${w.consecutive_failures} failures in a row)</dd>` : ''}
${w.throttled_until ? html`<dt>Paused until</dt><dd>${when(w.throttled_until)} (it answered 429 or 503)</dd>` : ''}
${w.previous_secret_expires_at ? html`<dt>Previous secret</dt><dd>still signs until ${when(w.previous_secret_expires_at)}</dd>` : ''}
</dl>`;
  const actions = canEdit
    ? html`<h2 id="actions-heading">Try it</h2>
${
  w.status === 'disabled'
    ? html`<p class="muted">It is disabled: nothing is sent to it. Enable it to send it events again (and a test event).</p>
<form method="post" action="${base}/enable">${csrf}<button type="submit" id="enable-webhook">Enable the endpoint</button></form>`
    : html`<form method="post" action="${base}/test">${csrf}<button type="submit" id="send-test">Send a test event</button></form>
<p class="muted">A <code>webhook.test</code> event, signed like any other, to this endpoint only; its delivery shows below.</p>`
}
<h3 id="recover-heading">Recover failed deliveries</h3>
<form method="post" action="${base}/recover" aria-labelledby="recover-heading">${csrf}
<label for="recover-since">Since <span class="muted">(UTC, e.g. 2026-01-31T12:00)</span></label><input id="recover-since" name="since" required value="${input.since ?? ''}" placeholder="2026-01-31T12:00">
<button type="submit" class="secondary" id="recover">Deliver them again</button></form>
<p class="muted">Each event since then whose delivery to this endpoint failed, and that it has not received since, is sent again (the same <code>webhook-id</code>).</p>`
    : '';
  const settings = html`<h2 id="webhook-settings-heading">Settings</h2>
${canEdit ? '' : html`<p class="muted" id="read-only">You are a viewer: you can read this endpoint and its deliveries but not change them.</p>`}
<form method="post" action="${base}/settings" aria-labelledby="webhook-settings-heading">${csrf}
<label for="webhook-url">URL</label><input id="webhook-url" name="url" type="url" required maxlength="2000" value="${v.url ?? w.url}"${disabled}>
<label for="webhook-description">Description</label><input id="webhook-description" name="description" maxlength="200" value="${v.description ?? w.description ?? ''}"${disabled}>
${eventsField(v.enabled_events ?? w.enabled_events, disabled)}
${canEdit ? html`<button type="submit" id="save-webhook">Save</button>` : ''}</form>`;
  const secret = input.secret ? secretBox(input.secret) : '';
  const manage = canEdit
    ? html`<h2 id="manage-heading">Secret and state</h2>
<form method="post" action="${base}/rotate-secret">${csrf}<button type="submit" class="secondary" id="rotate-webhook-secret">Rotate the signing secret</button></form>
<p class="muted">For 24 hours deliveries carry a signature with each secret, so your backend can switch without losing one.</p>
${w.status === 'disabled' ? '' : html`<form method="post" action="${base}/disable">${csrf}<button type="submit" class="danger" id="disable-webhook">Disable the endpoint</button></form>`}
<form method="post" action="${base}/remove">${csrf}<button type="submit" class="danger" id="remove-webhook">Remove the endpoint</button></form>
<p class="muted">Removing it removes its delivery log too.</p>`
    : '';
  const log =
    input.deliveries === null
      ? ''
      : input.deliveries.length === 0
        ? html`<div class="empty" id="no-deliveries"><p><strong>Nothing has been sent to this endpoint yet.</strong></p><p>${
            canEdit ? 'Send it a test event above, ' : ''
          }or record a payment with your API key: its events arrive here.</p></div>`
        : html`<ul class="items" aria-labelledby="deliveries-heading">${input.deliveries.map((d) =>
            deliveryItem(base, d, csrf, canEdit),
          )}</ul>`;
  frame(
    res,
    status,
    `${w.url} · Webhooks · ${app.name}`,
    f,
    html`${appHeading(app, role)}${appNav(app, 'webhooks')}
<p class="muted"><a href="/portal/apps/${app.id}/webhooks">Webhooks</a> › endpoint</p>
<h2 id="webhook-heading"><code>${w.url}</code></h2>${w.description ? html`<p>${w.description}</p>` : ''}
${facts}${secret}${actions}
<h2 id="deliveries-heading">Delivery log</h2><p class="muted">Newest first, the last 50, each with its attempts: the response status your endpoint answered or the error, how long it took, the body sent and the body answered (their first 4 KiB; no headers, so no signature).</p>${log}
${settings}${manage}`,
  );
}
