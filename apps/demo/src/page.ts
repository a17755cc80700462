import { agentsSection, type AgentsView } from './agents-page';
import { esc } from './escape';

export interface DemoView {
  signedIn: Record<string, unknown> | null;
  account: string;
  issuer?: string;
  error?: string;
  signedOut?: boolean;
  /** Signed in: the agents section (issue 42). */
  agents?: AgentsView;
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0;padding:2rem .75rem;display:flex;justify-content:center}
main{background:#fff;border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08);padding:1.5rem;width:min(40rem,100%)}
a.button,button{display:inline-block;padding:.65rem 1.2rem;border:0;border-radius:6px;background:#1f4fd1;color:#fff;text-decoration:none;font-size:1rem;cursor:pointer;margin:.3rem .3rem .3rem 0}
.secondary{background:#e4e6eb!important;color:#1d2330!important}dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{font-weight:600}dd{margin:0;word-break:break-all}
.error{color:#b00020;font-weight:600}code{background:#f0f1f4;padding:0 .25rem}
section{border-top:1px solid #e4e6eb;margin-top:1.5rem}label{display:block;margin:.5rem 0 .2rem}select{font-size:1rem;padding:.3rem}`;

/** The demo's one page: a sign-in button, or the claims the provider vouched for and the agents section. */
export function demoPage(view: DemoView): string {
  const claims = view.signedIn;
  const level =
    claims && view.issuer
      ? (claims[`${view.issuer}/v1`] as { verification_level?: string } | undefined)?.verification_level
      : undefined;
  const body = claims
    ? `<h1>You are signed in</h1>
<p>The provider verified these claims (id_token and <code>/userinfo</code>):</p>
<dl id="claims">
<dt>sub (pairwise: unique to this app)</dt><dd id="claim-sub">${esc(claims.sub)}</dd>
<dt>verification level</dt><dd id="claim-level">${esc(level)}</dd>
${claims.acr ? `<dt>acr</dt><dd id="claim-acr">${esc(claims.acr)}</dd>` : ''}
${claims.email ? `<dt>email</dt><dd id="claim-email">${esc(claims.email)}</dd>` : ''}
${claims.name ? `<dt>name</dt><dd id="claim-name">${esc(claims.name)}</dd>` : ''}
</dl>
<form method="post" action="/logout"><button type="submit" id="signout">Sign out</button>
<a class="button secondary" id="account-link" href="${esc(view.account)}">Manage your account</a></form>
${view.agents ? agentsSection(view.agents) : ''}`
    : `<h1>Attest demo app</h1>
<p>This app signs you in with OpenID Connect (code flow with PKCE) against your local Attest, and shows what it learns about you.</p>
${view.signedOut ? '<p id="signed-out">You are signed out.</p>' : ''}
<p><a class="button" id="signin" href="/login">Sign in</a>
<a class="button secondary" id="silent" href="/login?prompt=none">Check silently (prompt=none)</a></p>
<form method="get" action="/login"><label><input type="checkbox" id="require-orb" name="level" value="orb"> Orb-verified people only (an essential <code>acr</code>)</label>
<button type="submit" class="secondary" id="signin-level">Sign in with this setting</button></form>
<p>No account yet? Choose "Create an account with a passkey" on the sign-in page.</p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Attest demo</title><style>${STYLE}</style></head>
<body><main>${view.error ? `<p class="error" role="alert" id="error">${esc(view.error)}</p>` : ''}${body}</main></body></html>`;
}
