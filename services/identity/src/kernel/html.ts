import { randomBytes } from 'node:crypto';
import type { Response } from 'express';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** Tagged template that escapes every interpolated value unless it is already `Html`. */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  values.forEach((v, i) => {
    const rendered = Array.isArray(v)
      ? v.map((x) => (x instanceof Html ? x.value : escapeHtml(String(x)))).join('')
      : v instanceof Html
        ? v.value
        : escapeHtml(String(v ?? ''));
    out += rendered + strings[i + 1];
  });
  return new Html(out);
}

export interface PageOptions {
  /** CSP form-action: where the page's forms may post (and, in Chrome, redirect to). */
  formAction?: string;
  /** The nonce of the page's scripts (the WebAuthn pages); none: no script may run. */
  scriptNonce?: string;
  /** A wider page (the developer portal). */
  wide?: boolean;
  /** The page's scripts (with scriptNonce): the passkey scripts unless given. */
  scripts?: (nonce: string) => Html;
}

const withNotice = (res: Response, body: Html): Html => {
  const notice: unknown = res.locals[PAGE_NOTICE];
  return notice instanceof Html ? new Html(notice.value + body.value) : body;
};

export const newNonce = () => randomBytes(16).toString('base64');

/** The developer portal's script: its copy buttons (everything else works without it). */
export const portalScripts = (nonce: string) => html`<script nonce="${nonce}" src="/assets/portal.js"></script>`;

/** The scripts of a passkey page: the @simplewebauthn/browser bundle and ours, both carrying the nonce. */
export const passkeyScripts = (nonce: string) =>
  html`<script nonce="${nonce}" src="/assets/simplewebauthn-browser.js"></script><script nonce="${nonce}" src="/assets/passkeys.js"></script>`;

export function page(title: string, body: Html, scripts: Html | '' = '', wide = false): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><link rel="stylesheet" href="/assets/style.css"></head>
<body><main${wide ? ' class="wide"' : ''}>${body.value}</main>${scripts ? scripts.value : ''}</body></html>`;
}

/**
 * res.locals key of a notice a feature puts at the top of whatever page answers the request (issue 42: pending
 * approvals); an Html, or absent.
 */
export const PAGE_NOTICE = 'pageNotice';

/** Pages are never cached, never framed, send no referrer, and may only post back to us. */
export function sendPage(res: Response, status: number, title: string, body: Html, options: PageOptions = {}): void {
  const { formAction = "'self'", scriptNonce, wide, scripts = passkeyScripts } = options;
  const script = scriptNonce ? `script-src 'nonce-${scriptNonce}'; connect-src 'self'` : "script-src 'none'";
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      'X-Frame-Options': 'DENY',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': `default-src 'none'; style-src 'self'; img-src 'self'; ${script}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    })
    .send(page(title, withNotice(res, body), scriptNonce ? scripts(scriptNonce) : '', wide));
}
