import type { Response } from 'express';
import { html, newNonce, sendPage } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';

export interface SignInPageInput {
  /** Hidden fields naming where the sign-in continues (interaction, or next=account), and the CSRF token. */
  fields: Record<string, string>;
  /** The app asking; null for the account page. */
  appName: string | null;
  formAction: string;
  passkey: { ceremony: string; options: unknown };
  signupUrl: string | null;
  username?: string;
  error?: string;
}

/** Sign-in: password form (works without JavaScript), then a passkey (discoverable, no username needed). */
export function signInPage(res: Response, input: SignInPageInput, status = 200): void {
  const nonce = newNonce();
  sendPage(
    res,
    status,
    'Sign in',
    html`<h1>${input.appName ? html`Sign in to continue to ${input.appName}` : 'Sign in to your account'}</h1>
${input.error ? html`<p class="error" role="alert" id="signin-error">${input.error}</p>` : ''}
<form method="post" action="/signin">
${hiddenFields(input.fields)}
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required value="${input.username ?? ''}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" class="wide">Sign in</button>
</form>
<div data-passkey-section hidden>
<p class="divider">or</p>
<form method="post" action="/signin" data-passkey="authenticate" data-options="${JSON.stringify(input.passkey.options)}">
${hiddenFields({ ...input.fields, method: 'passkey', ceremony: input.passkey.ceremony, credential: '' })}
<button type="submit" class="wide" id="passkey-signin">Sign in with a passkey</button>
<p class="error" data-passkey-status role="status" aria-live="polite"></p>
</form>
</div>
<noscript><p class="muted">Passkeys need JavaScript; you can still sign in with a password.</p></noscript>
${input.signupUrl ? html`<p class="muted">New here? <a href="${input.signupUrl}" id="signup-link">Create an account with a passkey</a></p>` : ''}`,
    { formAction: input.formAction, scriptNonce: nonce },
  );
}
