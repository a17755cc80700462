import type { Response } from 'express';
import { html, newNonce, sendPage } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';

export interface SignUpPageInput {
  fields: Record<string, string>;
  appName: string | null;
  signInUrl: string;
  username?: string;
  name?: string;
  error?: string;
}

/** Sign-up, step 1: the username and an optional display name (no JavaScript needed). */
export function signUpPage(res: Response, input: SignUpPageInput, status = 200): void {
  sendPage(
    res,
    status,
    'Create an account',
    html`<h1>Create your account</h1>
<p class="muted">${input.appName ? html`Then continue to ${input.appName}. ` : ''}You sign in with a passkey: your fingerprint, face or screen lock. No password.</p>
${input.error ? html`<p class="error" role="alert" id="signup-error">${input.error}</p>` : ''}
<form method="post" action="/signup">
${hiddenFields({ ...input.fields, step: 'details' })}
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" required minlength="3" maxlength="64" pattern="[A-Za-z0-9._@+\\-]{3,64}" aria-describedby="username-help" value="${input.username ?? ''}">
<p class="muted" id="username-help">3 to 64 letters, digits or . _ - @ +</p>
<label for="name">Your name (optional)</label><input id="name" name="name" autocomplete="name" maxlength="200" value="${input.name ?? ''}">
<button type="submit" class="wide">Continue</button>
</form>
<p class="muted">Already have an account? <a href="${input.signInUrl}">Sign in</a></p>`,
  );
}

export interface SignUpPasskeyPageInput {
  fields: Record<string, string>;
  username: string;
  formAction: string;
  passkey: { ceremony: string; options: unknown };
}

/** Sign-up, step 2: the browser creates the passkey of the new account. */
export function signUpPasskeyPage(res: Response, input: SignUpPasskeyPageInput): void {
  const nonce = newNonce();
  sendPage(
    res,
    200,
    'Create a passkey',
    html`<h1>Create a passkey for ${input.username}</h1>
<p>Your device asks you to confirm with your fingerprint, face or screen lock. The passkey stays on your device (or in your password manager); we keep only its public key.</p>
<noscript><p class="error" role="alert">Creating a passkey needs JavaScript. Turn it on and reload this page.</p></noscript>
<div data-passkey-section hidden>
<form method="post" action="/signup" data-passkey="register" data-options="${JSON.stringify(input.passkey.options)}">
${hiddenFields({ ...input.fields, step: 'passkey', ceremony: input.passkey.ceremony, credential: '' })}
<button type="submit" class="wide" id="passkey-create">Create passkey</button>
<p class="error" data-passkey-status role="status" aria-live="polite"></p>
</form>
</div>`,
    { formAction: input.formAction, scriptNonce: nonce },
  );
}
