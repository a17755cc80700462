import type { Response } from 'express';
import type { App } from '../kernel/app-store';
import type { Member, MemberRole } from '../kernel/member-store';
import type { ApiKeyView } from './transactions-admin';
import { html, sendPage, type Html } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';

/** What every signed-in portal page shows in its header: who, and the sign-out form. */
export interface PortalFrame {
  username: string;
  csrf: string;
  notice?: string;
  error?: string;
}

const ROLE_TEXT: Record<MemberRole, string> = {
  owner: 'Owner: everything, including the team and disabling the app',
  developer: 'Developer: settings, client secret and API keys',
  viewer: 'Viewer: reads only',
};

export const when = (iso: string | Date | null) => {
  if (!iso) return html`<span class="muted">never</span>`;
  const text = typeof iso === 'string' ? iso : iso.toISOString();
  return html`<time datetime="${text}">${text.slice(0, 10)} ${text.slice(11, 16)} UTC</time>`;
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
    { wide: true },
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
  current: 'app' | 'keys' | 'webhooks' | 'payments' | 'events' | 'insight' | 'addresses',
): Html {
  const tab = (key: typeof current, href: string, label: string) =>
    html`<a href="${href}"${current === key ? html` aria-current="page"` : ''}>${label}</a>`;
  const base = `/portal/apps/${app.id}`;
  return html`<nav class="tabs" aria-label="${app.name}">${tab('app', base, 'Settings')}${tab('keys', `${base}/keys`, 'API keys')}${tab('webhooks', `${base}/webhooks`, 'Webhooks')}${tab('payments', `${base}/payments`, 'Payments')}${tab('addresses', `${base}/addresses`, 'Receiving addresses')}${tab('events', `${base}/events`, 'Events')}${tab('insight', `${base}/insight`, 'Sign-in insight')}</nav>`;
}

export const appHeading = (app: App, role: MemberRole) =>
  html`<p class="muted"><a href="/portal">Your apps</a> › ${app.name}</p>
<h1>${app.name}${app.disabledAt ? html` <span class="badge off">disabled</span>` : ''}</h1>
<p class="muted">Your role: <strong id="your-role">${role}</strong> (${ROLE_TEXT[role]})</p>`;

const lines = (values: string[]) => values.join('\n');

/**
 * Under a value shown once: how to copy it without a copy button (the pages run no script). Read-only
 * fields and the `copy` class (CSS user-select: all) select the whole value with one click or Ctrl+A.
 */
export const copyHint = html`<p class="muted" id="copy-hint">Click the field, select all (Ctrl+A or ⌘A) and copy (Ctrl+C or ⌘C).</p>`;

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

export interface AppPageInput {
  app: App;
  role: MemberRole;
  members: Member[];
  issuer: string;
  /** A client secret just made: shown this once. */
  secret?: string;
}

export function appPage(res: Response, f: PortalFrame, input: AppPageInput, status = 200): void {
  const { app, role } = input;
  const canEdit = role !== 'viewer';
  const csrf = hiddenFields({ csrf: f.csrf });
  const disabled = canEdit ? '' : html` disabled`;
  const checkbox = (name: string, checked: boolean, label: string, id: string) =>
    html`<label class="inline" for="${id}"><input type="checkbox" id="${id}" name="${name}" value="true"${checked ? html` checked` : ''}${disabled}> ${label}</label>`;
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
  const kind = app.public
    ? 'Public client: PKCE, no secret'
    : app.tokenEndpointAuthMethod === 'private_key_jwt'
      ? 'Confidential: private_key_jwt (its keys)'
      : `Confidential: client secret (${app.tokenEndpointAuthMethod})`;
  const secret = input.secret
    ? html`<div class="secret" role="status"><p><strong>The new client secret. Copy it now: it is shown only this once.</strong></p>
<label for="client-secret">Client secret</label><input id="client-secret" readonly value="${input.secret}" class="copy" spellcheck="false" autocomplete="off" aria-describedby="copy-hint">${copyHint}</div>`
    : '';
  const settings = html`<h2 id="settings-heading">Settings</h2>
${canEdit ? '' : html`<p class="muted" id="read-only">You are a viewer: you can read these settings but not change them.</p>`}
<form method="post" action="/portal/apps/${app.id}/settings" aria-labelledby="settings-heading">${csrf}
<label for="name">Name</label><input id="name" name="name" value="${app.name}" required maxlength="200"${disabled}>
<label for="redirect_uris">Redirect URIs <span class="muted">(one per line)</span></label>
<textarea id="redirect_uris" name="redirect_uris" rows="3"${disabled}>${lines(app.redirectUris)}</textarea>
<label for="post_logout_redirect_uris">Post-logout redirect URIs <span class="muted">(one per line)</span></label>
<textarea id="post_logout_redirect_uris" name="post_logout_redirect_uris" rows="2"${disabled}>${lines(app.postLogoutRedirectUris)}</textarea>
<label for="backchannel_logout_uri">Back-channel logout URI <span class="muted">(empty: none)</span></label>
<input id="backchannel_logout_uri" name="backchannel_logout_uri" type="url" value="${app.backchannelLogoutUri ?? ''}"${disabled}>
<label for="web_origins">Web origins <span class="muted">(CORS on /token; one per line)</span></label>
<textarea id="web_origins" name="web_origins" rows="2"${disabled}>${lines(app.webOrigins)}</textarea>
<label for="min_verification_level">Minimum verification level</label>
<select id="min_verification_level" name="min_verification_level"${disabled}>${option('none', 'None', app.minVerificationLevel === null)}${option('device', 'Device', app.minVerificationLevel === 'device')}${option('orb', 'Orb', app.minVerificationLevel === 'orb')}</select>
<label for="id_token_signed_response_alg">ID token signing algorithm</label>
<select id="id_token_signed_response_alg" name="id_token_signed_response_alg"${disabled}>${(['RS256', 'PS256', 'ES256'] as const).map((a) => option(a, a, app.idTokenSignedResponseAlg === a))}</select>
<fieldset><legend>Assurance</legend>
${checkbox('dpop_bound_access_tokens', app.dpopBoundAccessTokens, 'DPoP required: every access token is bound to a key (RFC 9449)', 'dpop')}
${checkbox('require_pushed_authorization_requests', app.requirePushedAuthorizationRequests, 'PAR required: sign-ins must be pushed to /par first (RFC 9126)', 'par')}
<label for="profile">Security profile</label>
<select id="profile" name="profile" aria-describedby="profile-hint"${disabled}>${option('none', 'None: each setting as set above', app.profile === 'none')}${option('fapi2', 'FAPI 2.0: PAR, DPoP, PKCE S256, private_key_jwt, PS256/ES256, https redirects', app.profile === 'fapi2')}</select>
<p class="muted" id="profile-hint">Under FAPI 2.0, PAR and DPoP are on whatever the boxes say, the ID token is signed with PS256 unless ES256 is chosen, and the app authenticates with its keys (private_key_jwt): give their URL below.</p>
${
  app.public
    ? ''
    : html`<label for="jwks_uri">Public keys URL <span class="muted">(jwks_uri, https; for private_key_jwt)</span></label>
<input id="jwks_uri" name="jwks_uri" type="url" value="${app.jwksUri ?? ''}"${disabled}>`
}
</fieldset>
${canEdit ? html`<button type="submit" id="save-settings">Save settings</button>` : ''}
</form>`;
  const client = html`<h2 id="client-heading">Client</h2>
<dl class="facts"><dt>Client ID</dt><dd><code class="copy" id="client-id">${app.id}</code></dd><dt>Kind</dt><dd id="client-kind">${kind}</dd><dt>Created</dt><dd>${when(app.createdAt)}</dd></dl>
${secret}
${
  canEdit && !app.public && app.tokenEndpointAuthMethod !== 'private_key_jwt'
    ? html`<form method="post" action="/portal/apps/${app.id}/rotate-secret">${csrf}<button type="submit" class="secondary" id="rotate-secret">Rotate the client secret</button></form>
<p class="muted">The old secret stops working at once.</p>`
    : ''
}`;
  const snippet = html`<h2 id="snippet-heading">Your first sign-in</h2>
<p class="muted">With <a href="https://github.com/panva/openid-client">openid-client</a> (Node.js): the issuer, this app’s client ID and its first redirect URI. One click selects all of it.</p>
<pre tabindex="0" aria-labelledby="snippet-heading" id="snippet" class="copy"><code>${firstSignInSnippet(input.issuer, app)}</code></pre>`;
  const team = html`<h2 id="team-heading">Team</h2>
<ul class="items" aria-labelledby="team-heading">${input.members.map(
    (
      m,
    ) => html`<li data-member="${m.username}"><span><strong>${m.username}</strong>${m.name ? html` (${m.name})` : ''}<br><span class="muted">${m.role}</span></span>
${role === 'owner' ? html`<form method="post" action="/portal/apps/${app.id}/members/remove">${csrf}${hiddenFields({ user_id: m.userId })}<button type="submit" class="danger" aria-label="Remove ${m.username} from the team">Remove</button></form>` : ''}</li>`,
  )}</ul>
${
  role === 'owner'
    ? html`<form method="post" action="/portal/apps/${app.id}/members" aria-label="Add a member or change a role">${csrf}
<div class="row"><div><label for="member-username">Username</label><input id="member-username" name="username" required maxlength="200"></div>
<div><label for="member-role">Role</label><select id="member-role" name="role">${option('viewer', 'Viewer', true)}${option('developer', 'Developer', false)}${option('owner', 'Owner', false)}</select></div></div>
<button type="submit" id="add-member">Add or change</button></form>`
    : html`<p class="muted">Only an owner can change the team.</p>`
}`;
  const danger =
    role === 'owner'
      ? html`<h2 id="state-heading">${app.disabledAt ? 'Enable' : 'Disable'}</h2>
<p class="muted">${app.disabledAt ? 'Enabling lets the app sign people in again, and its API keys work again.' : 'A disabled app signs nobody in, its tokens stop working and its API keys get 401.'}</p>
<form method="post" action="/portal/apps/${app.id}/${app.disabledAt ? 'enable' : 'disable'}">${csrf}<button type="submit" class="${app.disabledAt ? 'secondary' : 'danger'}" id="${app.disabledAt ? 'enable-app' : 'disable-app'}">${app.disabledAt ? 'Enable the app' : 'Disable the app'}</button></form>`
      : '';
  frame(
    res,
    status,
    app.name,
    f,
    html`${appHeading(app, role)}${appNav(app, 'app')}${client}${settings}${snippet}${team}${danger}`,
  );
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
<label for="new-api-key">API key</label><input id="new-api-key" readonly value="${input.created.api_key}" class="copy" spellcheck="false" autocomplete="off" aria-describedby="copy-hint">${copyHint}</div>`
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
