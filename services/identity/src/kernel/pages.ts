import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import { SCOPE_DESCRIPTIONS, type Scope } from './scopes';
import type { AppRegistration } from './app-store';
import { escapeHtml, html, sendPage, type Html } from './html';

/** Hidden inputs, one per field. */
export const hiddenFields = (fields: Record<string, string>): Html[] =>
  Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);

/**
 * CSP form-action for our forms: Chrome applies it to the redirect that follows a form POST too,
 * so the page must also allow the origin of the request's (registered) redirect URI.
 */
export const formAction = (redirectUri: string) => `'self' ${new URL(redirectUri).origin}`;

/** Who asks, as the consent page says it (issue 41): an app an operator made, or one that registered itself. */
export interface ConsentClient {
  id: string;
  name: string;
  registration: AppRegistration;
}

/**
 * The asking client in plain words: a metadata document's client by the host of its address (the one thing
 * about it that is checked), a self-registered one named and marked as not reviewed by the operator.
 */
export function whoAsks(client: ConsentClient): { title: Html | string; note: Html | string } {
  if (client.registration === 'metadata_document') {
    const host = new URL(client.id).host;
    return {
      title: host,
      note: html`<p id="client-origin" class="notice">An app at <strong>${host}</strong> (it calls itself
“${client.name}”), identified by its address <code>${client.id}</code>. It is not reviewed by the operator of
this sign-in service: continue only if you trust ${host}.</p>`,
    };
  }
  if (client.registration === 'dynamic')
    return {
      title: client.name,
      note: html`<p id="client-origin" class="notice">This app registered itself: it is <strong>not reviewed by the
operator</strong> of this sign-in service. Continue only if you trust it.</p>`,
    };
  return { title: client.name, note: '' };
}

/** A refresh token asked for (offline_access, or a self-registered client's refresh_token grant), in words. */
const OFFLINE_ACCESS_DESCRIPTION = 'Keep this access when you are not using it, until you withdraw it';

/**
 * Each scope a request asks, as its consent lists them: OpenID Connect's, then the resource's, then
 * offline_access when the grant will give a refresh token.
 */
export const askedScopes = (request: {
  scopes: readonly string[];
  resource?: { scopes: readonly string[] };
  offlineAccess?: true;
}): string[] => [
  ...request.scopes,
  ...(request.resource?.scopes ?? []),
  ...(request.offlineAccess ? ['offline_access'] : []),
];

const describeScope = (s: string): Html | string =>
  s === 'offline_access'
    ? OFFLINE_ACCESS_DESCRIPTION
    : (SCOPE_DESCRIPTIONS[s as Scope] ?? html`Use the permission <code>${s}</code>`);

/** What a client asks for, as the consent and device pages list it: the resource by name, then each scope. */
export const askedFor = (scopes: readonly string[], resource: string | undefined): Html =>
  html`${resource ? html`<p id="resource">Access <strong>${resource}</strong> as you, and:</p>` : ''}
<ul>${scopes.map((s) => html`<li data-scope="${s}">${describeScope(s)}</li>`)}</ul>`;

export function consentPage(
  res: Response,
  input: {
    interaction: string;
    csrf: string;
    client: ConsentClient;
    redirectUri: string;
    scopes: readonly string[];
    /** The name of the resource (RFC 8707) the request is for, when it names one. */
    resource?: string;
  },
): void {
  const who = whoAsks(input.client);
  sendPage(
    res,
    200,
    'Allow access',
    html`<h1>${who.title} wants to</h1>
${who.note}
${askedFor(input.scopes, input.resource)}
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

/**
 * A person below the verification level an app demands (an essential acr, or the app's minimum): what the
 * app asks for, why they cannot continue, and a way back to the app that delivers
 * unmet_authentication_requirements to its redirect_uri (a link, or for form_post a button posting it).
 */
export function unmetRequirementsPage(
  res: Response,
  input: {
    appName: string;
    /** Who demands the level when it is not the app: the resource (RFC 8707) the app asks to use. */
    askedBy?: string;
    wanted: string;
    has: string;
    redirectUri: string;
    responseMode: 'query' | 'fragment' | 'form_post';
    values: Record<string, string>;
  },
): void {
  let back: Html;
  if (input.responseMode === 'form_post') {
    back = html`<form method="post" action="${input.redirectUri}">
${hiddenFields(input.values)}
<button type="submit" id="back-to-app">Back to ${input.appName}</button>
</form>`;
  } else {
    const url = new URL(input.redirectUri);
    if (input.responseMode === 'query') for (const [k, v] of Object.entries(input.values)) url.searchParams.set(k, v);
    else url.hash = new URLSearchParams(input.values).toString();
    back = html`<p><a id="back-to-app" href="${url.toString()}">Back to ${input.appName}</a></p>`;
  }
  sendPage(
    res,
    403,
    'Verification level required',
    html`<h1>${input.askedBy ? html`${input.askedBy}, which ${input.appName} asks to use,` : input.appName} requires a higher verification level</h1>
<p class="error" role="alert">${input.askedBy ?? input.appName} asks for people verified at level <strong id="wanted-level">${input.wanted}</strong>. Your account is verified at level <strong id="account-level">${input.has}</strong>, so you cannot continue to ${input.askedBy ? input.appName : 'this app'} with it.</p>
<p>Error code: <code id="error-code">unmet_authentication_requirements</code></p>
${back}`,
    { formAction: formAction(input.redirectUri) },
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
