import type { Response } from 'express';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import type { ApiKeyView } from './transactions-admin';
import { html, newNonce, portalScripts, sendPage, type Html } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';

/** What every signed-in portal page shows in its header: who, and the sign-out form. */
export interface PortalFrame {
  username: string;
  csrf: string;
  notice?: string;
  error?: string;
}

export const ROLE_TEXT: Record<MemberRole, string> = {
  owner: 'Owner: everything, including the team and disabling the app',
  developer: 'Developer: settings, client secret and API keys',
  viewer: 'Viewer: reads only',
};

export const when = (iso: string | Date | null) => {
  if (!iso) return html`<span class="muted">never</span>`;
  const text = typeof iso === 'string' ? iso : iso.toISOString();
  return html`<time datetime="${text}">${text.slice(0, 10)} ${text.slice(11, 19)} UTC</time>`;
};

export function frame(res: Response, status: number, title: string, f: PortalFrame, body: Html): void {
  sendPage(
    res,
    status,
    `${title} · Attest developer portal`,
    html`<header class="portal-header"><a href="/portal" class="brand">Attest developer portal</a>
<form method="post" action="/portal/signout" class="signout">${hiddenFields({ csrf: f.csrf })}<span class="muted">Signed in as <strong id="portal-username">${f.username}</strong></span>
<button type="submit" class="secondary">Sign out</button></form></header>
${f.notice ? html`<p class="notice" role="status" id="portal-notice">${f.notice}</p>` : ''}
${f.error ? html`<p class="error" role="alert" id="portal-error">${f.error}</p>` : ''}
${body}`,
    { wide: true, scriptNonce: newNonce(), scripts: portalScripts },
  );
}

export function portalLandingPage(res: Response, input: { error?: string } = {}): void {
  sendPage(
    res,
    input.error ? 400 : 200,
    'Attest developer portal',
    html`<h1>Attest developer portal</h1>
<p>Change your apps’ redirect URIs, rotate their secrets and manage their API keys yourself.</p>
${input.error ? html`<p class="error" role="alert" id="portal-error">${input.error}</p>` : ''}
<form method="get" action="/portal/signin"><button type="submit" class="wide" id="portal-signin">Sign in with Attest</button></form>
<p class="muted">You see the apps an operator or an app’s owner made you a member of.</p>`,
  );
}

export function portalSignedOutPage(res: Response): void {
  sendPage(
    res,
    200,
    'Signed out · Attest developer portal',
    html`<h1>You are signed out of the portal</h1><p><a href="/portal">Sign in again</a></p>`,
  );
}

export function portalErrorPage(
  res: Response,
  status: number,
  f: PortalFrame | null,
  title: string,
  detail: string,
): void {
  const body = html`<h1>${title}</h1><p class="error" role="alert" id="portal-error">${detail}</p><p><a href="/portal">Your apps</a></p>`;
  if (f) frame(res, status, title, f, body);
  else sendPage(res, status, title, body);
}

export function appsPage(
  res: Response,
  f: PortalFrame,
  input: { apps: { app: App; role: MemberRole }[]; selfService: boolean },
  status = 200,
): void {
  const list =
    input.apps.length === 0
      ? html`<div class="empty" id="no-apps"><p><strong>You are not a member of any app yet.</strong></p>
<p>Ask your operator to add you (<code>pnpm manage app add-member --app-id … --username ${f.username} --role owner</code>), or ask an app’s owner to add you to its team${input.selfService ? ', or create an app below' : ''}.</p></div>`
      : html`<ul class="items" aria-labelledby="apps-heading">${input.apps.map(
          ({ app, role }) =>
            html`<li data-app="${app.id}"><span><a href="/portal/apps/${app.id}"><strong>${app.name}</strong></a>${app.disabledAt ? html` <span class="badge off">disabled</span>` : ''}<br>
<span class="muted"><code>${app.id}</code> · ${role}</span></span></li>`,
        )}</ul>`;
  const create = input.selfService
    ? html`<h2 id="create-heading">Create an app</h2>
<form method="post" action="/portal/apps" aria-labelledby="create-heading">${hiddenFields({ csrf: f.csrf })}
<label for="new-name">Name</label><input id="new-name" name="name" required maxlength="200">
<label for="new-redirect">Redirect URI</label><input id="new-redirect" name="redirect_uri" type="url" required placeholder="https://app.example.com/callback">
<fieldset><legend>Kind</legend>
<label class="inline"><input type="radio" name="kind" value="confidential" checked> Confidential: a server that keeps a client secret</label>
<label class="inline"><input type="radio" name="kind" value="public"> Public: a single-page or native app (PKCE, no secret)</label></fieldset>
<button type="submit" id="create-app">Create the app</button></form>`
    : '';
  frame(res, status, 'Your apps', f, html`<h1 id="apps-heading">Your apps</h1>${list}${create}`);
}

/** The tabs of an app's pages. */
export function appNav(
  app: App,
  current: 'app' | 'keys' | 'webhooks' | 'payments' | 'events' | 'insight' | 'addresses' | 'policy',
): Html {
  const tab = (key: typeof current, href: string, label: string) =>
    html`<a href="${href}"${current === key ? html` aria-current="page"` : ''}>${label}</a>`;
  const base = `/portal/apps/${app.id}`;
  return html`<nav class="tabs" aria-label="${app.name}">${tab('app', base, 'Settings')}${tab('keys', `${base}/keys`, 'API keys')}${tab('webhooks', `${base}/webhooks`, 'Webhooks')}${tab('payments', `${base}/payments`, 'Payments')}${tab('addresses', `${base}/addresses`, 'Receiving addresses')}${tab('policy', `${base}/payment-policy`, 'Payment policy')}${tab('events', `${base}/events`, 'Events')}${tab('insight', `${base}/insight`, 'Sign-in insight')}</nav>`;
}

/** The heading of an app's pages: where it is, its name and state, the person's role. */
export const appHeading = (app: App, role: MemberRole) =>
  html`<p class="muted"><a href="/portal">Your apps</a> › ${app.name}</p>
<h1>${app.name}${app.disabledAt ? html` <span class="badge off">disabled</span>` : ''}</h1>
<p class="muted">Your role: <strong id="your-role">${role}</strong> (${ROLE_TEXT[role]})</p>`;

/** Under a read-only field to copy (the receiving-address challenge's message): how to copy all of it. */
export const copyHint = html`<p class="muted" id="copy-hint">Click the field, select all (Ctrl+A or ⌘A) and copy (Ctrl+C or ⌘C).</p>`;

/**
 * A value shown once (a client secret, an API key, a signing secret): all of it, wrapped in monospace, never
 * clipped; one click selects all of it (user-select: all), and a copy button (portal.js; hidden without
 * JavaScript) copies it. `id` names the value's element.
 */
export const shownOnce = (id: string, label: string, value: string) =>
  html`<label for="${id}">${label}</label>
<div class="shown-once"><output id="${id}" class="shown-once-value" tabindex="0" aria-describedby="${id}-hint">${value}</output>
<button type="button" class="secondary" data-copy="${id}" hidden>Copy</button></div>
<p class="muted" id="${id}-status" aria-live="polite"></p>
<p class="muted" id="${id}-hint">One click on it selects all of it; copy it with the button, or Ctrl+C (⌘C).</p>`;

/** The copyable "your first sign-in" snippet for openid-client (code flow with PKCE). */
export function firstSignInSnippet(issuer: string, app: App): string {
  const insecure = issuer.startsWith('http:') ? ', { execute: [client.allowInsecureRequests] }' : '';
  const auth = app.public
    ? `undefined, client.None()${insecure}`
    : `process.env.CLIENT_SECRET${insecure ? `, undefined${insecure}` : ''}`;
  return `import * as client from 'openid-client';

const config = await client.discovery(new URL('${issuer}'), '${app.id}', ${auth});
const code_verifier = client.randomPKCECodeVerifier();
const url = client.buildAuthorizationUrl(config, {
  redirect_uri: '${app.redirectUris[0] ?? ''}',
  scope: 'openid profile',
  code_challenge: await client.calculatePKCECodeChallenge(code_verifier),
  code_challenge_method: 'S256',
});
// send the browser to url; at the redirect URI:
// const tokens = await client.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: code_verifier });`;
}

export function keysPage(
  res: Response,
  f: PortalFrame,
  input: { app: App; role: MemberRole; keys: ApiKeyView[] | null; created?: { api_key: string; name: string | null } },
  status = 200,
): void {
  const { app, role } = input;
  const canEdit = role !== 'viewer';
  const csrf = hiddenFields({ csrf: f.csrf });
  const live = (input.keys ?? []).filter((k) => !k.revoked_at);
  const revoked = (input.keys ?? []).filter((k) => k.revoked_at);
  const created = input.created
    ? html`<div class="secret" role="status"><p><strong>Your new API key${input.created.name ? html` “${input.created.name}”` : ''}. Copy it now: it is shown only this once.</strong></p>
${shownOnce('new-api-key', 'API key', input.created.api_key)}</div>`
    : '';
  const list =
    input.keys === null
      ? ''
      : live.length === 0
        ? html`<div class="empty" id="no-keys"><p><strong>This app has no API key.</strong></p><p>${canEdit ? 'Create one below for your backend: it records payments and looks them up with it.' : 'A developer or owner of the app can create one.'}</p></div>`
        : html`<ul class="items" aria-labelledby="keys-heading">${live.map(
            (
              k,
            ) => html`<li data-key="${k.key_id}"><span><strong>${k.name ?? 'unnamed'}</strong> <code>${k.key_id}</code><br>
<span class="muted">created ${when(k.created_at)} · last used ${when(k.last_used_at)}</span></span>
${canEdit ? html`<form method="post" action="/portal/apps/${app.id}/keys/revoke">${csrf}${hiddenFields({ key_id: k.key_id })}<button type="submit" class="danger" aria-label="Revoke ${k.name ?? k.key_id}">Revoke</button></form>` : ''}</li>`,
          )}</ul>`;
  const past = revoked.length
    ? html`<details><summary>${revoked.length} revoked</summary><ul class="items">${revoked.map(
        (k) =>
          html`<li><span>${k.name ?? 'unnamed'} <code>${k.key_id}</code> <span class="muted">revoked ${when(k.revoked_at)}</span></span></li>`,
      )}</ul></details>`
    : '';
  const form = canEdit
    ? html`<h2 id="new-key-heading">Create an API key</h2>
<form method="post" action="/portal/apps/${app.id}/keys" aria-labelledby="new-key-heading">${csrf}
<label for="key-name">Name <span class="muted">(what uses it, e.g. shop-backend)</span></label><input id="key-name" name="name" maxlength="200">
<button type="submit" id="create-key">Create the key</button></form>`
    : html`<p class="muted" id="read-only">You are a viewer: you can see the keys but not create or revoke them.</p>`;
  frame(
    res,
    status,
    `API keys · ${app.name}`,
    f,
    html`${appHeading(app, role)}${appNav(app, 'keys')}<h2 id="keys-heading">API keys</h2>${created}${list}${past}${form}`,
  );
}

export function insightPage(
  res: Response,
  f: PortalFrame,
  input: { app: App; role: MemberRole; days: { day: string; signIns: number; withdrawals: number }[] },
): void {
  const { app, role, days } = input;
  const total = (k: 'signIns' | 'withdrawals') => days.reduce((n, d) => n + d[k], 0);
  frame(
    res,
    200,
    `Sign-in insight · ${app.name}`,
    f,
    html`${appHeading(app, role)}${appNav(app, 'insight')}<h2 id="insight-heading">The last ${days.length} days</h2>
<p><strong id="signins-total">${total('signIns')}</strong> sign-ins · <strong id="withdrawals-total">${total('withdrawals')}</strong> consent withdrawals</p>
${
  total('signIns') + total('withdrawals') === 0
    ? html`<p class="empty" id="no-signins">Nobody has signed in to this app yet. Use the “your first sign-in” snippet on the settings page to add sign-in to it.</p>`
    : ''
}
<table aria-labelledby="insight-heading"><thead><tr><th scope="col">Day (UTC)</th><th scope="col">Sign-ins</th><th scope="col">Consent withdrawals</th></tr></thead>
<tbody>${days
      .slice()
      .reverse()
      .map(
        (d) => html`<tr data-day="${d.day}"><td>${d.day}</td><td>${d.signIns}</td><td>${d.withdrawals}</td></tr>`,
      )}</tbody></table>
<p class="muted">Counts only, from the audit trail: who signed in is not shown.</p>`,
  );
}
