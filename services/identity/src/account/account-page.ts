import type { Response } from 'express';
import { SCOPE_DESCRIPTIONS, type Scope } from '../kernel/scopes';
import type { User } from '../kernel/user-store';
import { html, newNonce, sendPage, type Html } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';

export interface AccountPageInput {
  csrf: string;
  user: User;
  consents: { appId: string; appName: string; scopes: string[]; grantedAt: Date }[];
  passkeys: { id: string; name: string; createdAt: Date; lastUsedAt: Date | null }[];
  addPasskey: { ceremony: string; options: unknown };
  sessions: AccountSession[];
  /** Panels of other features (issue 42: approvals waiting), after the notices. */
  panels?: (Html | '')[];
  /** What other features add after the approved apps (issue 42: agents acting for you). */
  sections?: Html[];
  /** The sign-in is too old to change passkeys: offer to sign in again first (the window, in words). */
  reauth?: string;
  notice?: string;
  error?: string;
}

/** A browser session as the account page lists it (times in milliseconds since the epoch). */
export interface AccountSession {
  id: string;
  device: string | null;
  amr: string[];
  createdAt: number;
  lastSeenAt: number;
  /** The session of the browser looking at the page. */
  current: boolean;
}

const day = (d: Date) => d.toISOString().slice(0, 10);
/** "2025-03-01 14:05 UTC", in a <time> element a browser extension or a reader can localise. */
const when = (ms: number) => {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
};
const method = (amr: string[]) => (amr.includes('hwk') ? 'passkey' : amr.includes('pwd') ? 'password' : null);

function sessionsSection(sessions: AccountSession[], csrf: Html[]): Html {
  const others = sessions.filter((s) => !s.current).length;
  return html`<h2 id="sessions">Where you are signed in</h2>
<ul class="items" aria-labelledby="sessions">${sessions.map((s) => {
    const how = method(s.amr);
    const label = s.device ?? 'Unknown device';
    return html`<li data-session-id="${s.id}"${s.current ? html` data-current` : ''}><span><strong>${label}</strong>${s.current ? html` <span class="badge">this browser</span>` : ''}<br>
<span class="muted">signed in ${when(s.createdAt)}${how ? ` with a ${how}` : ''} · last seen ${when(s.lastSeenAt)}</span></span>
<form method="post" action="/account/sessions/end">${csrf}${hiddenFields({ session_id: s.id })}<button type="submit" class="danger" aria-label="${s.current ? 'Sign out of this browser' : `End the session on ${label}`}">${s.current ? 'Sign out' : 'End'}</button></form></li>`;
  })}</ul>
${
  others > 0
    ? html`<form method="post" action="/account/sessions/end-others">${csrf}<button type="submit" class="secondary" id="end-other-sessions">End all other sessions</button></form>`
    : html`<p class="muted">You are signed in nowhere else.</p>`
}
<p class="muted">Ending a session signs that browser out here and tells the apps it used.</p>`;
}
const describe = (scope: string) => SCOPE_DESCRIPTIONS[scope as Scope] ?? scope;

/**
 * What a consent holds, in words: each OpenID scope described, then each resource (RFC 8707: a URI, which
 * never holds a fragment) with the scopes granted on it, as the consent keeps them (`<uri>`, `<uri>#<scope>`).
 */
export function describeGrants(granted: readonly string[]): string[] {
  const resources = new Map<string, string[]>();
  const plain: string[] = [];
  for (const entry of granted) {
    const hash = entry.indexOf('#');
    if (hash > 0) {
      const uri = entry.slice(0, hash);
      resources.set(uri, [...(resources.get(uri) ?? []), entry.slice(hash + 1)]);
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) {
      if (!resources.has(entry)) resources.set(entry, []);
    } else plain.push(describe(entry));
  }
  const onResources = [...resources].map(
    ([uri, scopes]) => `Use ${uri}${scopes.length ? ` (${scopes.join(', ')})` : ''}`,
  );
  return [...plain, ...onResources];
}

/** The signed-in user's account: approved apps, sessions, passkeys, password. Every change is a form with the CSRF token. */
export function accountPage(res: Response, input: AccountPageInput, status = 200): void {
  const nonce = newNonce();
  const csrf = hiddenFields({ csrf: input.csrf });
  const { user } = input;
  sendPage(
    res,
    status,
    'Your account',
    html`<h1>Your account</h1>
<p>Signed in as <strong id="account-username">${user.username}</strong>${user.name ? html` (${user.name})` : ''}.
Verification level: <strong id="account-level">${user.verificationLevel}</strong>.</p>
${input.notice ? html`<p class="notice" role="status" id="account-notice">${input.notice}</p>` : ''}
${input.error ? html`<p class="error" role="alert" id="account-error">${input.error}</p>` : ''}
${input.panels ?? ''}
<h2 id="apps">Apps you approved</h2>
${
  input.consents.length === 0
    ? html`<p class="muted">No app can read your details.</p>`
    : html`<ul class="items" aria-labelledby="apps">${input.consents.map(
        (
          c,
        ) => html`<li data-app="${c.appId}"><span><strong>${c.appName}</strong><br><span class="muted">${describeGrants(c.scopes).join('; ')} · since ${day(c.grantedAt)}</span></span>
<form method="post" action="/account/consents/withdraw">${csrf}${hiddenFields({ app_id: c.appId })}<button type="submit" class="danger" aria-label="Withdraw ${c.appName}">Withdraw</button></form></li>`,
      )}</ul>
<p class="muted">Withdrawing stops the app's tokens at once; it must ask you again.</p>`
}
${input.sections ?? ''}
${sessionsSection(input.sessions, csrf)}
<h2 id="passkeys">Passkeys</h2>
${
  input.reauth
    ? html`<p class="muted" id="passkeys-reauth">To add or remove a passkey, <a href="/signin?next=account">sign in again</a> first (a sign-in of the last ${input.reauth} is needed).</p>`
    : ''
}
${
  input.passkeys.length === 0
    ? html`<p class="muted">No passkeys yet.</p>`
    : html`<ul class="items" aria-labelledby="passkeys">${input.passkeys.map(
        (
          p,
        ) => html`<li data-passkey-id="${p.id}"><span><strong>${p.name}</strong><br><span class="muted">added ${day(p.createdAt)}${p.lastUsedAt ? html` · last used ${day(p.lastUsedAt)}` : ''}</span></span>
<form method="post" action="/account/passkeys/remove">${csrf}${hiddenFields({ passkey_id: p.id })}<button type="submit" class="danger" aria-label="Remove passkey ${p.name}">Remove</button></form></li>`,
      )}</ul>`
}
<noscript><p class="muted">Adding a passkey needs JavaScript.</p></noscript>
<div data-passkey-section hidden>
<form method="post" action="/account/passkeys" data-passkey="register" data-options="${JSON.stringify(input.addPasskey.options)}">
${csrf}${hiddenFields({ ceremony: input.addPasskey.ceremony, credential: '' })}
<label for="passkey-name">Name of the new passkey (optional)</label><input id="passkey-name" name="name" maxlength="100" placeholder="e.g. my phone">
<button type="submit" id="passkey-add">Add a passkey</button>
<p class="error" data-passkey-status role="status" aria-live="polite"></p>
</form>
</div>
${
  user.passwordHash
    ? html`<h2 id="password">Password</h2>
<form method="post" action="/account/password">${csrf}
<input type="text" name="username" autocomplete="username" value="${user.username}" hidden>
<label for="current_password">Current password</label><input id="current_password" name="current_password" type="password" autocomplete="current-password" required>
<label for="new_password">New password</label><input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="8" required aria-describedby="password-help">
<p class="muted" id="password-help">At least 8 characters.</p>
<label for="confirm_password">New password, again</label><input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="8" required>
<button type="submit">Change password</button>
</form>`
    : ''
}`,
    { scriptNonce: nonce },
  );
}
