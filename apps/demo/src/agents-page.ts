import { EXCHANGE_SCOPES, type AgentsState, type PaymentDetail } from './agents';
import { esc } from './escape';
const json = (value: unknown) => esc(JSON.stringify(value));
const at = (seconds: number | undefined) => (seconds ? new Date(seconds * 1000).toISOString() : '');

/** What the agents section shows: the person's state, the trips resource, the account page. */
export interface AgentsView {
  state: AgentsState;
  resource: { uri: string; scopes: readonly string[] };
  account: string;
}

const SCOPE_LABELS: Record<(typeof EXCHANGE_SCOPES)[number], string> = {
  'trips:read': 'trips:read (narrower than what you gave)',
  'trips:read trips:book': 'trips:read trips:book (all you gave)',
  'trips:read payments:make': 'trips:read payments:make (wider: Attest refuses it)',
};

const paymentInWords = (d: PaymentDetail) => `Pay ${d.amount} ${d.currency} to ${d.payee} (reference: ${d.reference})`;

const STATES: Record<string, string> = {
  pending: 'Waiting for you',
  approved: 'Approved',
  denied: 'Denied',
  expired: 'Expired: nobody decided in time',
  failed: 'Failed',
};

function delegationPart(view: AgentsView): string {
  const { state, resource } = view;
  const granted = state.granted;
  const d = state.delegated;
  return `<h3 id="delegation-heading">An agent acting for you (token exchange)</h3>
<p>The demo app plays an agent too. Let it act for you: Attest asks your consent for its trips API
(<code>${esc(resource.uri)}</code>, scopes <code>${esc(resource.scopes.join(' '))}</code>), then the agent
exchanges the token you gave it for a short-lived one that says it acts for you (RFC 8693, the <code>act</code> claim).
The token is its own, so it needs no operator leave (<code>may_act_for_users</code>).</p>
${
  granted
    ? `<p id="agent-granted">You gave the agent a token for <code>${esc(resource.uri)}</code> with the scope <code>${esc(granted.scope)}</code>.</p>
<form method="post" action="/agents/exchange"><label for="exchange-scope">Scope of the agent’s token</label>
<select id="exchange-scope" name="scope">${EXCHANGE_SCOPES.map((s) => `<option value="${esc(s)}">${esc(SCOPE_LABELS[s])}</option>`).join('')}</select>
<button type="submit" id="agent-exchange">Exchange your token</button></form>`
    : `<p><a class="button" id="agent-authorize" href="/agents/authorize">Let the demo’s agent act for you</a></p>`
}
${
  d
    ? `<p>The agent’s token (<code>${esc(d.issuedTokenType)}</code>, for ${esc(d.expiresIn)} s):</p>
<dl id="delegated">
<dt>act (the agent)</dt><dd id="delegated-act">${json(d.claims.act)}</dd>
<dt>aud</dt><dd id="delegated-aud">${esc(d.claims.aud)}</dd>
<dt>scope</dt><dd id="delegated-scope">${esc(d.claims.scope)}</dd>
<dt>sub (you, for this app)</dt><dd id="delegated-sub">${esc(d.claims.sub)}</dd>
<dt>acr</dt><dd id="delegated-acr">${esc(d.claims.acr)}</dd>
<dt>expires</dt><dd id="delegated-exp">${esc(at(d.claims.exp))}</dd>
<dt>Attest’s <code>/introspect</code></dt><dd id="delegated-introspection">active: ${esc(d.introspection.active)}, act: ${json(d.introspection.act)}</dd>
</dl>`
    : ''
}
<p>Your account page lists the agent under “Agents acting for you”; ending it there stops its tokens at once:
<a id="account-agents" href="${esc(view.account)}#agents">see it there</a>.</p>`;
}

function approvalPart(view: AgentsView): string {
  const p = view.state.payment;
  return `<h3 id="approval-heading">Approving one action (CIBA)</h3>
<p>Before it pays, the agent asks you to approve that one payment: Attest shows the request on your account page,
in words, and you approve it with your passkey or your password, or deny it (CIBA with a <code>payment</code>
authorization detail, RFC 9396).</p>
<form method="post" action="/agents/payment"><button type="submit" id="ask-payment">Ask me to approve a payment</button></form>
${
  p
    ? `<dl id="payment">
<dt>State</dt><dd id="payment-state" data-state="${esc(p.state)}">${esc(STATES[p.state])}</dd>
<dt>Code (check it matches)</dt><dd id="payment-binding">${esc(p.bindingMessage)}</dd>
<dt>Asked</dt><dd id="payment-detail">${esc(paymentInWords(p.detail))}</dd>
${
  p.approved
    ? `<dt>Approved <code>authorization_details</code></dt><dd id="payment-approved">${json(p.approved.authorizationDetails)}</dd>
<dt>acr</dt><dd id="payment-acr">${esc(p.approved.acr)}</dd>
<dt>Approved at</dt><dd id="payment-approved-at">${esc(at(p.approved.approvedAt))}</dd>`
    : ''
}
${p.error ? `<dt>Attest answered</dt><dd id="payment-error">${esc(p.error)}</dd>` : ''}
</dl>
${
  p.state === 'pending'
    ? `<p id="payment-pending">Approve or deny it on <a id="approve-link" href="${esc(view.account)}#approvals">your account page</a>.
The agent asks Attest every few seconds until you decide: come back here to see the outcome.</p>
<form method="post" action="/agents/check"><button type="submit" class="secondary" id="payment-refresh">Check again</button></form>`
    : ''
}`
    : ''
}`;
}

/** The signed-in page's agents section (issue 42): delegation, and the approval of one payment. */
export function agentsSection(view: AgentsView): string {
  return `<section id="agents" aria-labelledby="agents-heading">
<h2 id="agents-heading">Agents</h2>
${view.state.error ? `<p class="error" role="alert" id="agents-error">${esc(view.state.error)}</p>` : ''}
${delegationPart(view)}
${approvalPart(view)}
</section>`;
}
