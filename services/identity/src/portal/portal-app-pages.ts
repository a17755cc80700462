import type { Response } from 'express';
import type { App } from '../kernel/app-store';
import type { Member, MemberRole } from '../kernel/member-store';
import { html, type Html } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';
import { appHeading, appNav, firstSignInSnippet, frame, shownOnce, when, type PortalFrame } from './portal-pages';

/**
 * An app's own settings, in parts (issue 40, item 13): each its page, its URL, its forms landing back on
 * it. Another part (e.g. the app's receiving addresses) is one more entry here and its own page.
 */
export const APP_SECTIONS = [
  { key: 'settings', path: '', label: 'Settings' },
  { key: 'security', path: '/security', label: 'Security' },
  { key: 'agents', path: '/agents', label: 'Agents and devices' },
  { key: 'team', path: '/team', label: 'Team' },
  { key: 'danger', path: '/danger-zone', label: 'Danger zone' },
] as const;
export type AppSection = (typeof APP_SECTIONS)[number]['key'];

/** The path of an app's section page. */
export const sectionPath = (appId: string, section: AppSection) =>
  `/portal/apps/${appId}${APP_SECTIONS.find((s) => s.key === section)?.path ?? ''}`;

/** The sub-navigation of an app's settings pages, under the tabs. */
export function appSubNav(app: App, current: AppSection): Html {
  return html`<nav class="subnav" aria-label="App settings">${APP_SECTIONS.map(
    (s) =>
      html`<a href="/portal/apps/${app.id}${s.path}" data-section="${s.key}"${current === s.key ? html` aria-current="page"` : ''}>${s.label}</a>`,
  )}</nav>`;
}

export interface AppPageInput {
  app: App;
  role: MemberRole;
  members: Member[];
  issuer: string;
  /** A client secret just made: shown this once. */
  secret?: string;
}

type Csrf = ReturnType<typeof hiddenFields>;
const lines = (values: string[]) => values.join('\n');
const option = (value: string, label: string, selected: boolean) =>
  html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
const readOnly = (canEdit: boolean, what: string) =>
  canEdit ? '' : html`<p class="muted" id="read-only">You are a viewer: you can read ${what} but not change them.</p>`;

/** A client secret just made (a new app's on its settings page, a rotated one on its security page): shown once. */
const secretBox = (secret: string | undefined) =>
  secret
    ? html`<div class="secret" role="status"><p><strong>The new client secret. Copy it now: it is shown only this once.</strong></p>
${shownOnce('client-secret', 'Client secret', secret)}</div>`
    : '';

/** Settings: the client's facts, its names and URLs, and the first sign-in snippet. */
function settingsSection(input: AppPageInput, csrf: Csrf, canEdit: boolean): Html {
  const { app } = input;
  const disabled = canEdit ? '' : html` disabled`;
  const kind = app.public
    ? 'Public client: PKCE, no secret'
    : app.tokenEndpointAuthMethod === 'private_key_jwt'
      ? 'Confidential: private_key_jwt (its keys)'
      : `Confidential: client secret (${app.tokenEndpointAuthMethod})`;
  return html`<h2 id="client-heading">Client</h2>
<dl class="facts"><dt>Client ID</dt><dd><code class="copy" id="client-id">${app.id}</code></dd><dt>Kind</dt><dd id="client-kind">${kind}</dd><dt>Created</dt><dd>${when(app.createdAt)}</dd></dl>
${secretBox(input.secret)}
<h2 id="settings-heading">Settings</h2>
${readOnly(canEdit, 'these settings')}
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
${canEdit ? html`<button type="submit" id="save-settings">Save settings</button>` : ''}
</form>
<h2 id="snippet-heading">Your first sign-in</h2>
<p class="muted">With <a href="https://github.com/panva/openid-client">openid-client</a> (Node.js): the issuer, this app’s client ID and its first redirect URI. One click selects all of it.</p>
<pre tabindex="0" aria-labelledby="snippet-heading" id="snippet" class="copy"><code>${firstSignInSnippet(input.issuer, app)}</code></pre>`;
}

/** Security: the client secret (rotate; a new one shown once), the verification level, algorithms, DPoP, PAR, profile. */
function securitySection(input: AppPageInput, csrf: Csrf, canEdit: boolean): Html {
  const { app } = input;
  const disabled = canEdit ? '' : html` disabled`;
  const checkbox = (name: string, checked: boolean, label: string, id: string) =>
    html`<label class="inline" for="${id}"><input type="checkbox" id="${id}" name="${name}" value="true"${checked ? html` checked` : ''}${disabled}> ${label}</label>`;
  const rotate =
    canEdit && !app.public && app.tokenEndpointAuthMethod !== 'private_key_jwt'
      ? html`<form method="post" action="/portal/apps/${app.id}/rotate-secret">${csrf}<button type="submit" class="secondary" id="rotate-secret">Rotate the client secret</button></form>
<p class="muted">The old secret stops working at once.</p>`
      : '';
  const secretPart = app.public
    ? html`<p class="muted" id="no-secret">A public client has no secret: it signs in with PKCE.</p>`
    : app.tokenEndpointAuthMethod === 'private_key_jwt'
      ? html`<p class="muted" id="no-secret">The app authenticates with its keys (private_key_jwt): it has no secret.</p>`
      : html`<p class="muted">The secret is never shown again after it is made; rotate it to get a new one.</p>`;
  return html`<h2 id="secret-heading">Client secret</h2>${secretBox(input.secret)}${secretPart}${rotate}
<h2 id="security-heading">Sign-in security</h2>
${readOnly(canEdit, 'these settings')}
<form method="post" action="/portal/apps/${app.id}/security" aria-labelledby="security-heading">${csrf}
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
${canEdit ? html`<button type="submit" id="save-security">Save security settings</button>` : ''}
</form>`;
}

/**
 * Agents and devices: the grants an app's team may turn on for it — the device flow (RFC 8628) and CIBA
 * (poll or ping, with ping's notification endpoint) — and, read-only, whether the app may act for every
 * person (RFC 8693 with any person's token): that one lets an app reach people who never chose it, so only
 * the operator sets it.
 */
function agentsSection(input: AppPageInput, csrf: Csrf, canEdit: boolean): Html {
  const { app } = input;
  const disabled = canEdit ? '' : html` disabled`;
  const mode = app.backchannelTokenDeliveryMode;
  const ciba = app.public
    ? html`<p class="muted" id="ciba-public">A public client cannot use CIBA: it has no credentials to authenticate at <code>/bc-authorize</code>.</p>`
    : html`<label for="ciba_mode">Token delivery mode</label>
<select id="ciba_mode" name="backchannel_token_delivery_mode" aria-describedby="ciba-hint"${disabled}>${option('none', 'Off: no CIBA', mode === null)}${option('poll', 'Poll: the app asks /token until the person decides', mode === 'poll')}${option('ping', 'Ping: Attest calls the notification endpoint, then the app asks /token', mode === 'ping')}</select>
<label for="ciba_notification_endpoint">Notification endpoint <span class="muted">(ping mode; https; empty: none)</span></label>
<input id="ciba_notification_endpoint" name="backchannel_client_notification_endpoint" type="url" value="${app.backchannelClientNotificationEndpoint ?? ''}"${disabled}>
<p class="muted" id="ciba-hint">With a mode set, the app may ask a person to approve one action (<code>POST /bc-authorize</code>, with a binding message and authorization details such as a payment); the person approves or denies it on their account page. Ping mode needs the endpoint: Attest POSTs the <code>auth_req_id</code> there once the person decided.</p>`;
  return html`<h2 id="agents-heading">Agents and devices</h2>
${readOnly(canEdit, 'these settings')}
<form method="post" action="/portal/apps/${app.id}/agents" aria-labelledby="agents-heading">${csrf}
<fieldset><legend>Device flow</legend>
<label class="inline" for="device_flow"><input type="checkbox" id="device_flow" name="device_authorization_grant" value="true"${app.deviceAuthorizationGrant ? html` checked` : ''}${disabled}> Device flow: people sign in to a TV, a command line or another device without a browser by entering a code on their phone (RFC 8628)</label>
</fieldset>
<fieldset><legend>Approval of one action (CIBA)</legend>
${ciba}
</fieldset>
${canEdit ? html`<button type="submit" id="save-agents">Save agent and device settings</button>` : ''}
</form>
<h2 id="act-heading">Acting for every person</h2>
<dl class="facts"><dt>May act for any person</dt><dd id="may-act-for-users">${app.mayActForUsers ? 'Yes' : 'No'}</dd></dl>
<p class="muted" id="may-act-note">Only the operator sets this (<code>pnpm manage app update ${app.id} --may-act-for-users</code>): it lets the app exchange any person’s token for one acting for them (RFC 8693 token exchange), not only the tokens people gave it, so an app’s team cannot give it to itself. Without it, the app acts for a person only with their own consent to it.</p>`;
}

/** Team: the members and their roles; an owner adds, changes and removes them. */
function teamSection(input: AppPageInput, csrf: Csrf): Html {
  const { app, role } = input;
  return html`<h2 id="team-heading">Team</h2>
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
}

/** Danger zone: disabling (or enabling) the app, an owner's. */
function dangerSection(input: AppPageInput, csrf: Csrf): Html {
  const { app, role } = input;
  const off = Boolean(app.disabledAt);
  const what = off
    ? 'Enabling lets the app sign people in again, and its API keys work again.'
    : 'A disabled app signs nobody in, its tokens stop working and its API keys get 401.';
  return html`<h2 id="state-heading">${off ? 'Enable' : 'Disable'}</h2>
<p id="app-state">The app is <strong>${off ? 'disabled' : 'enabled'}</strong>${off ? html` (since ${when(app.disabledAt)})` : ''}.</p>
<p class="muted">${what}</p>
${
  role === 'owner'
    ? html`<form method="post" action="/portal/apps/${app.id}/${off ? 'enable' : 'disable'}">${csrf}<button type="submit" class="${off ? 'secondary' : 'danger'}" id="${off ? 'enable-app' : 'disable-app'}">${off ? 'Enable the app' : 'Disable the app'}</button></form>`
    : html`<p class="muted" id="read-only">Only an owner can disable or enable the app.</p>`
}`;
}

const TITLES: Record<AppSection, string> = {
  settings: '',
  security: 'Security · ',
  agents: 'Agents and devices · ',
  team: 'Team · ',
  danger: 'Danger zone · ',
};

/** One of an app's settings pages: the heading, the tabs, the sub-navigation, the section. */
export function appPage(res: Response, f: PortalFrame, section: AppSection, input: AppPageInput, status = 200): void {
  const canEdit = input.role !== 'viewer';
  const csrf = hiddenFields({ csrf: f.csrf });
  const body =
    section === 'security'
      ? securitySection(input, csrf, canEdit)
      : section === 'agents'
        ? agentsSection(input, csrf, canEdit)
        : section === 'team'
          ? teamSection(input, csrf)
          : section === 'danger'
            ? dangerSection(input, csrf)
            : settingsSection(input, csrf, canEdit);
  frame(
    res,
    status,
    `${TITLES[section]}${input.app.name}`,
    f,
    html`${appHeading(input.app, input.role)}${appNav(input.app, 'app')}${appSubNav(input.app, section)}${body}`,
  );
}
