import { PAYMENT_REQUEST_STATUSES } from '@attest/common';
import type { Response } from 'express';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import type { EventView, PaymentRequestView, TransactionView } from './transactions-admin';
import { html, type Html } from '../kernel/html';
import { appHeading, appNav, frame, when, type PortalFrame } from './portal-pages';

/** The statuses a payment request goes through (the transactions service's list, from @attest/common), and a transaction's. */
export const REQUEST_STATUSES = PAYMENT_REQUEST_STATUSES;
export const TRANSACTION_STATUSES = ['pending', 'mined', 'failed'] as const;

/** An amount kept × 10^6 (every token's amounts are), as a decimal: 2500000 → 2.5. */
export function tokenUnits(amount: string | null): string {
  if (amount === null || !/^\d+$/.test(amount)) return '—';
  const n = BigInt(amount);
  const fraction = (n % 1000000n).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${n / 1000000n}.${fraction}` : `${n / 1000000n}`;
}

const GOOD = new Set(['paid', 'paid_over', 'mined']);
const BAD = new Set(['failed', 'expired', 'underpaid', 'paid_late']);
const statusBadge = (s: string) =>
  html`<span class="badge${GOOD.has(s) ? '' : BAD.has(s) ? ' off' : ' wait'}" data-status="${s}">${s.replace('_', ' ')}</span>`;

export interface PaymentsPageInput {
  app: App;
  role: MemberRole;
  search: { reference?: string; status?: string };
  requests: { data: PaymentRequestView[]; next: string | null } | null;
  transactions: { data: TransactionView[]; next: string | null } | null;
}

const option = (value: string, label: string, selected: boolean) =>
  html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;

export function paymentsPage(res: Response, f: PortalFrame, input: PaymentsPageInput, status = 200): void {
  const { app, role, search } = input;
  const base = `/portal/apps/${app.id}/payments`;
  const searching = Boolean(search.reference || search.status);
  const link = (extra: Record<string, string>) =>
    `${base}?${new URLSearchParams(
      Object.entries({ reference: search.reference ?? '', status: search.status ?? '', ...extra }).filter(([, v]) => v),
    ).toString()}`;
  const form = html`<form method="get" action="${base}" role="search" aria-label="Search payments">
<div class="row"><div><label for="search-reference">Reference</label><input id="search-reference" name="reference" maxlength="200" value="${search.reference ?? ''}" placeholder="order-1234"></div>
<div><label for="search-status">Status</label><select id="search-status" name="status">${option('', 'Any', !search.status)}
<optgroup label="Payment requests">${REQUEST_STATUSES.filter((s) => s !== 'pending' && s !== 'failed').map((s) => option(s, s.replace('_', ' '), search.status === s))}</optgroup>
<optgroup label="Both">${option('pending', 'pending', search.status === 'pending')}${option('failed', 'failed', search.status === 'failed')}</optgroup>
<optgroup label="Transactions">${option('mined', 'mined', search.status === 'mined')}</optgroup></select></div></div>
<button type="submit" id="search-payments">Search</button>${searching ? html` <a href="${base}">Clear</a>` : ''}</form>`;
  const empty = (what: string, next: Html | string) =>
    html`<div class="empty"><p><strong>${searching ? `No ${what} matches this search.` : `This app has no ${what} yet.`}</strong></p><p>${next}</p></div>`;
  const requests =
    input.requests === null
      ? html`<p class="muted">Payment requests have no status “${search.status ?? ''}”.</p>`
      : input.requests.data.length === 0
        ? html`<div id="no-requests">${empty(
            'payment request',
            searching
              ? 'Check the reference (it must match exactly) or choose another status.'
              : html`Your backend creates one for each order with <code>POST /api/v2/client/payment-requests</code> and its API key (see the API keys page); the customer’s wallet then pays it.`,
          )}</div>`
        : html`<ul class="items" aria-labelledby="requests-heading">${input.requests.data.map(
            (
              r,
            ) => html`<li data-request="${r.id}"><span><a href="${base}/requests/${r.id}"><strong>${r.reference}</strong></a> ${statusBadge(r.status)}<br>
<span class="muted">${tokenUnits(r.amount_paid)} of ${tokenUnits(r.amount_due)} ${r.token} · ${r.payments.length} payment${r.payments.length === 1 ? '' : 's'} · created ${when(r.created_at)}${r.reason ? ` · ${r.reason}` : ''}</span></span></li>`,
          )}</ul>${input.requests.next ? html`<p><a href="${link({ requests_after: input.requests.next })}">More payment requests</a></p>` : ''}`;
  const transactions =
    input.transactions === null
      ? html`<p class="muted">Transactions have no status “${search.status ?? ''}”.</p>`
      : input.transactions.data.length === 0
        ? html`<div id="no-transactions">${empty(
            'transaction',
            searching
              ? 'Check the reference (it must match exactly) or choose another status.'
              : html`Your backend records each payment a wallet sends with <code>POST /api/v2/client/transaction</code> and its API key.`,
          )}</div>`
        : html`<ul class="items" aria-labelledby="transactions-heading">${input.transactions.data.map(
            (
              t,
            ) => html`<li data-transaction="${t.transaction_id}"><span><a href="${base}/transactions/${t.transaction_id}"><strong>${t.reference}</strong></a> ${statusBadge(t.transaction_status)}<br>
<span class="muted">${t.type} · ${tokenUnits(t.token_amount)} ${t.token} on ${t.chain} · recorded ${when(t.timestamp)}</span></span></li>`,
          )}</ul>${input.transactions.next ? html`<p><a href="${link({ transactions_after: input.transactions.next })}">More transactions</a></p>` : ''}`;
  frame(
    res,
    status,
    `Payments · ${app.name}`,
    f,
    html`${appHeading(app, role)}${appNav(app, 'payments')}<h2 id="payments-heading">Payments</h2>${form}
<h3 id="requests-heading">Payment requests <span class="muted">(oldest first)</span></h3>${requests}
<h3 id="transactions-heading">Transactions <span class="muted">(newest first)</span></h3>${transactions}`,
  );
}

const fact = (term: string, value: Html | string, id?: string) =>
  html`<dt>${term}</dt><dd${id ? html` id="${id}"` : ''}>${value}</dd>`;

export function paymentRequestPage(
  res: Response,
  f: PortalFrame,
  input: { app: App; role: MemberRole; request: PaymentRequestView },
): void {
  const { app, role, request: r } = input;
  const base = `/portal/apps/${app.id}/payments`;
  const payments =
    r.payments.length === 0
      ? html`<p class="empty" id="no-payments">No payment has been recorded for it yet. Your backend records the wallet’s payment with <code>POST /api/v2/client/transaction</code> and <code>payment_request_id</code> <code>${r.id}</code>.</p>`
      : html`<ul class="items" aria-labelledby="request-payments-heading">${r.payments.map(
          (
            p,
          ) => html`<li data-transaction="${p.transaction_id}"><span><a href="${base}/transactions/${p.transaction_id}"><strong>${p.reference}</strong></a> ${statusBadge(p.status)}${p.late ? html` <span class="badge off">late</span>` : ''}<br>
<span class="muted">recorded ${tokenUnits(p.token_amount)} · received ${tokenUnits(p.amount_received)} ${r.token}${p.reason ? ` · ${p.reason}` : ''}${p.block_number ? ` · block ${p.block_number}` : ''}${p.confirmations !== null ? ` · ${p.confirmations} confirmations` : ''} · ${when(p.recorded_at)}</span></span></li>`,
        )}</ul>`;
  frame(
    res,
    200,
    `${r.reference} · Payments · ${app.name}`,
    f,
    html`${appHeading(app, role)}${appNav(app, 'payments')}
<p class="muted"><a href="${base}">Payments</a> › payment request</p>
<h2 id="request-heading">Payment request <code>${r.reference}</code></h2>
<dl class="facts">${fact('Status', statusBadge(r.status), 'request-status')}
${fact('Reason', r.reason ? html`${r.reason}${r.reason_detail ? html`<br><span class="muted">${r.reason_detail}</span>` : ''}` : html`<span class="muted">none</span>`, 'request-reason')}
${fact('Amount due', `${tokenUnits(r.amount_due)} ${r.token}`)}
${fact('Paid', `${tokenUnits(r.amount_paid)} ${r.token}`, 'request-paid')}
${r.amount_remaining !== '0' ? fact('Remaining', `${tokenUnits(r.amount_remaining)} ${r.token}`) : ''}
${r.amount_over !== '0' ? fact('Over', `${tokenUnits(r.amount_over)} ${r.token}`) : ''}
${r.amount_refunded && r.amount_refunded !== '0' ? fact('Refunded', `${tokenUnits(r.amount_refunded)} ${r.token}`) : ''}
${r.price ? fact('Price', html`${r.price.amount} ${r.price.currency} <span class="muted">(converted at the ${r.price.source} price of ${when(r.price.observed_at)})</span>`) : ''}
${fact('To', html`<code>${r.to}</code> on ${r.chain}`)}
${fact('ID', html`<code class="copy">${r.id}</code>`)}
${fact('Created', when(r.created_at))}${fact('Expires', when(r.expires_at))}${fact('Last change', when(r.updated_at))}</dl>
<h3 id="request-payments-heading">Payments recorded for it</h3>${payments}
<p class="muted">Each payment’s page has its status history: when it was recorded, and when and why the chain watcher or an operator moved it.</p>`,
  );
}

export function transactionPage(
  res: Response,
  f: PortalFrame,
  input: { app: App; role: MemberRole; transaction: TransactionView },
): void {
  const { app, role, transaction: t } = input;
  const base = `/portal/apps/${app.id}/payments`;
  const history = t.history ?? [];
  frame(
    res,
    200,
    `${t.reference} · Payments · ${app.name}`,
    f,
    html`${appHeading(app, role)}${appNav(app, 'payments')}
<p class="muted"><a href="${base}">Payments</a> › transaction</p>
<h2 id="transaction-heading">Transaction <code>${t.reference}</code></h2>
<dl class="facts">${fact('Status', statusBadge(t.transaction_status), 'transaction-status')}
${fact('Reason', t.status_reason ?? html`<span class="muted">none</span>`)}
${fact('Amount', `${tokenUnits(t.token_amount)} ${t.token}`, 'transaction-amount')}
${fact('Type', t.type)}${fact('Chain', t.chain)}
${fact('From', html`<code>${t.from}</code>`)}${fact('To', html`<code>${t.to}</code>`)}
${fact('Transaction hash', t.transaction_hash ? html`<code class="copy">${t.transaction_hash}</code>` : html`<span class="muted">none</span>`)}
${fact('Recorded', when(t.timestamp))}</dl>
<h3 id="history-heading">History</h3>
<div class="scroll" tabindex="0" role="region" aria-labelledby="history-heading"><table><thead><tr><th scope="col">When</th><th scope="col">Status</th><th scope="col">By</th><th scope="col">Why</th></tr></thead>
<tbody>${history.map(
      (h) =>
        html`<tr><td>${when(h.changed_at)}</td><td>${h.from_status ? `${h.from_status} → ` : 'recorded: '}${h.to_status}</td><td>${h.source}</td><td>${h.reason ?? ''}${h.reason_detail ? html`<br><span class="muted">${h.reason_detail}</span>` : ''}</td></tr>`,
    )}</tbody></table></div>`,
  );
}

export function eventsPage(
  res: Response,
  f: PortalFrame,
  input: {
    app: App;
    role: MemberRole;
    type?: string;
    page: { data: EventView[]; has_more: boolean; next_after: string | null } | null;
  },
  status = 200,
): void {
  const { app, role, page } = input;
  const base = `/portal/apps/${app.id}/events`;
  const list =
    page === null
      ? ''
      : page.data.length === 0
        ? html`<div class="empty" id="no-events"><p><strong>${input.type ? 'No event of these types.' : 'This app has no events yet.'}</strong></p>
<p>Events come when your backend records a payment or creates a payment request with its API key, and when a payment is mined or fails. They are kept 30 days (WEBHOOK_EVENT_RETENTION_DAYS).</p></div>`
        : html`<ul class="items" aria-labelledby="events-heading">${page.data.map(
            (
              e,
            ) => html`<li data-event="${e.event_id}"><div class="grow"><strong>${e.type}</strong> <span class="muted">${when(e.created_at)} · <code>${e.event_id}</code></span>
<details><summary>Payload</summary><pre tabindex="0" aria-label="Payload of ${e.event_id}"><code>${JSON.stringify(e.payload, null, 2)}</code></pre></details></div></li>`,
          )}</ul>${
            page.has_more && page.next_after
              ? html`<p><a href="${base}?${new URLSearchParams({ ...(input.type ? { type: input.type } : {}), after: page.next_after }).toString()}" id="next-events">Later events</a></p>`
              : ''
          }`;
  frame(
    res,
    status,
    `Events · ${app.name}`,
    f,
    html`${appHeading(app, role)}${appNav(app, 'events')}<h2 id="events-heading">Events</h2>
<p class="muted">Oldest first: the same events, ids and payloads your webhook endpoints are sent and <code>GET /api/v2/client/events</code> answers (test events are not listed).</p>
<form method="get" action="${base}" role="search" aria-label="Filter events"><label for="events-type">Types <span class="muted">(comma-separated: <code>transaction.mined</code>, <code>payment_request.*</code>; empty: all)</span></label>
<input id="events-type" name="type" maxlength="2000" value="${input.type ?? ''}"><button type="submit" id="filter-events">Show</button></form>
${list}`,
  );
}
