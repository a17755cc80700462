import type { Response } from 'express';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import type { DeliveryView, WebhookView } from './transactions-admin';
import { html, type Html } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';
import { appHeading, appNav, copyHint, frame, when, type PortalFrame } from './portal-pages';

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
<label for="webhook-secret">Signing secret</label><input id="webhook-secret" readonly value="${secret}" class="copy" spellcheck="false" autocomplete="off" aria-describedby="copy-hint">${copyHint}
<p class="muted">Verify each delivery’s <code>webhook-signature</code> with it (Standard Webhooks, e.g. the <a href="https://github.com/standard-webhooks/standard-webhooks">standardwebhooks</a> library).</p></div>`;

const eventsField = (id: string, value: string, disabled: Html | '') =>
  html`<label for="${id}">Event types <span class="muted">(one per line: <code>transaction.mined</code>, or a family: <code>payment_request.*</code>; empty: every type)</span></label>
<textarea id="${id}" name="enabled_events" rows="3"${disabled}>${value}</textarea>`;

export interface WebhooksPageInput {
  app: App;
  role: MemberRole;
  /** null: the transactions service could not be asked (the error says why). */
  webhooks: WebhookView[] | null;
  created?: { webhook: WebhookView; secret: string };
  /** The add form as sent, when it was refused. */
  form?: { url?: string; description?: string; enabled_events?: string };
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
${eventsField('webhook-events', v.enabled_events ?? '', '')}
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
  form?: { url?: string; description?: string; enabled_events?: string };
  /** The recover form's value as sent (refused). */
  since?: string;
}

const attemptRow = (a: DeliveryView['log'][number]) =>
  html`<tr><td>${a.attempt}</td><td>${when(a.started_at)}</td><td>${a.status_code ?? html`<span class="muted">none</span>`}</td><td>${a.error ?? ''}</td><td>${a.latency_ms} ms</td></tr>`;

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
<tbody>${d.log.map(attemptRow)}</tbody></table></div></details>`
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
${eventsField('webhook-events', v.enabled_events ?? w.enabled_events.join('\n'), disabled)}
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
<h2 id="deliveries-heading">Delivery log</h2><p class="muted">Newest first, the last 50, each with its attempts: the response status your endpoint answered, or the error.</p>${log}
${settings}${manage}`,
  );
}
