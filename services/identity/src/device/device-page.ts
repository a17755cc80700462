import type { Response } from 'express';
import { html, sendPage } from '../kernel/html';
import { askedFor, whoAsks, type ConsentClient } from '../kernel/pages';

/** Step 1: the person types the code their device shows (pre-filled from verification_uri_complete). */
export function enterCodePage(
  res: Response,
  input: { csrf: string; userCode?: string; error?: string },
  status = 200,
  headers: Record<string, string> = {},
): void {
  sendPage(
    res.set(headers),
    status,
    'Connect a device',
    html`<h1>Connect a device</h1>
<p>Enter the code shown on your device or in your terminal.</p>
${input.error ? html`<p class="error" role="alert" id="device-error">${input.error}</p>` : ''}
<form method="post" action="/device">
<input type="hidden" name="csrf" value="${input.csrf}">
<label for="user_code">Code</label><input id="user_code" name="user_code" required autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" placeholder="XXXX-XXXX" value="${input.userCode ?? ''}">
<button type="submit" name="decision" value="confirm" class="wide">Continue</button>
</form>`,
  );
}

/**
 * Step 2, signed in: which client asks (the consent page's words), for what and on which resource, and
 * the code once more so the person checks it is their device's; approve or deny.
 */
export function approvalPage(
  res: Response,
  input: {
    csrf: string;
    userCode: string;
    client: ConsentClient;
    scopes: readonly string[];
    resource?: string;
    username: string;
    switchUrl: string;
  },
): void {
  const who = whoAsks(input.client);
  sendPage(
    res,
    200,
    'Allow a device',
    html`<h1>${who.title} wants to</h1>
${who.note}
${askedFor(input.scopes, input.resource)}
<p>Allow only if your device shows the code <strong id="user-code">${input.userCode}</strong>.</p>
<p class="muted">Signed in as <strong id="signed-in-as">${input.username}</strong>. <a href="${input.switchUrl}" id="switch-account">Not you? Sign in with another account</a></p>
<form method="post" action="/device">
<input type="hidden" name="csrf" value="${input.csrf}">
<input type="hidden" name="user_code" value="${input.userCode}">
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  );
}

/**
 * The person is below the level the request, the app or the resource demands: why, a way to sign in with
 * an account verified at that level (step-up), and a way to deny.
 */
export function unmetLevelPage(
  res: Response,
  input: { csrf: string; userCode: string; appName: string; wanted: string; has: string; switchUrl: string },
): void {
  sendPage(
    res,
    403,
    'Verification level required',
    html`<h1>${input.appName} requires a higher verification level</h1>
<p class="error" role="alert">${input.appName} asks for people verified at level <strong id="wanted-level">${input.wanted}</strong>. Your account is verified at level <strong id="account-level">${input.has}</strong>, so you cannot allow this device with it.</p>
<p>Error code: <code id="error-code">unmet_authentication_requirements</code></p>
<p><a href="${input.switchUrl}" id="switch-account">Sign in with an account verified at level ${input.wanted}</a></p>
<form method="post" action="/device">
<input type="hidden" name="csrf" value="${input.csrf}">
<input type="hidden" name="user_code" value="${input.userCode}">
<button type="submit" name="decision" value="deny" class="secondary">Deny the device</button>
</form>`,
  );
}

/** The end: the device gets its answer at its next poll. */
export function decidedPage(res: Response, approved: boolean, appName: string): void {
  sendPage(
    res,
    200,
    approved ? 'Device allowed' : 'Device denied',
    approved
      ? html`<h1>Device allowed</h1><p id="device-decision" role="status">${appName} can now continue on your device. You can close this window.</p>`
      : html`<h1>Device denied</h1><p id="device-decision" role="status">${appName} was not allowed. You can close this window.</p>`,
  );
}
