import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import { SCOPE_DESCRIPTIONS, type Scope } from '../domain/scopes';
import { escapeHtml, html, sendPage, type Html } from './html';

/** Hidden inputs, one per field. */
export const hiddenFields = (fields: Record<string, string>): Html[] =>
  Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);

/**
 * CSP form-action for our forms: Chrome applies it to the redirect that follows a form POST too,
 * so the page must also allow the origin of the request's (registered) redirect URI.
 */
export const formAction = (redirectUri: string) => `'self' ${new URL(redirectUri).origin}`;

export function consentPage(
  res: Response,
  input: { interaction: string; csrf: string; appName: string; redirectUri: string; scopes: Scope[] },
): void {
  sendPage(
    res,
    200,
    'Allow access',
    html`<h1>${input.appName} wants to</h1>
<ul>${input.scopes.map((s) => html`<li data-scope="${s}">${SCOPE_DESCRIPTIONS[s]}</li>`)}</ul>
<form method="post" action="/consent">
<input type="hidden" name="interaction" value="${input.interaction}">
<input type="hidden" name="csrf" value="${input.csrf}">
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
    { formAction: formAction(input.redirectUri) },
  );
}

export function errorPage(
  res: Response,
  status: number,
  error: { code: string; detail: string; attribute: string | null },
): void {
  sendPage(
    res,
    status,
    'Sign-in error',
    html`<h1>This sign-in request cannot continue</h1>
<p class="error" role="alert">${error.detail}</p>
<p>Error code: <code id="error-code">${error.code}</code>${error.attribute ? html` (attribute <code id="error-attribute">${error.attribute}</code>)` : ''}</p>`,
  );
}

/** response_mode=form_post: a page that posts the values to the app (HTML-escaped), script-free fallback included. */
export function formPostPage(res: Response, redirectUri: string, values: Record<string, string>): void {
  const nonce = randomBytes(16).toString('base64');
  const inputs = Object.entries(values)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('\n');
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Continuing…</title></head>
<body><form method="post" action="${escapeHtml(redirectUri)}">
${inputs}
<noscript><button type="submit">Continue</button></noscript>
</form>
<script nonce="${nonce}">document.forms[0].submit();</script></body></html>`;
  res
    .status(200)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; form-action ${new URL(redirectUri).origin}; frame-ancestors 'none'; base-uri 'none'`,
    })
    .send(body);
}

/** RP-Initiated Logout without a valid id_token_hint: the user confirms (a CSRF-protected POST). */
export function logoutConfirmPage(
  res: Response,
  input: { csrf: string; appName?: string; clientId?: string; postLogoutRedirectUri?: string; state?: string },
): void {
  const hidden = (name: string, value: string | undefined) =>
    value === undefined ? '' : html`<input type="hidden" name="${name}" value="${value}">`;
  sendPage(
    res,
    200,
    'Sign out',
    html`<h1>Sign out?</h1>
<p>${input.appName ? html`${input.appName} asks to sign you out.` : 'Do you want to sign out?'} You will need to sign in again to use apps with this account.</p>
<form method="post" action="/logout/confirm">
<input type="hidden" name="csrf" value="${input.csrf}">
${hidden('client_id', input.clientId)}${hidden('post_logout_redirect_uri', input.postLogoutRedirectUri)}${hidden('state', input.state)}
<button type="submit" name="decision" value="logout">Sign out</button>
<button type="submit" name="decision" value="stay" class="secondary">Stay signed in</button>
</form>`,
    { formAction: input.postLogoutRedirectUri ? formAction(input.postLogoutRedirectUri) : "'self'" },
  );
}

export function signedOutPage(res: Response, signedOut: boolean): void {
  sendPage(
    res,
    200,
    signedOut ? 'Signed out' : 'Still signed in',
    signedOut
      ? html`<h1>You are signed out</h1><p>You can close this window.</p>`
      : html`<h1>You are still signed in</h1><p>You can close this window.</p>`,
  );
}
