// An agent acting for a person (RFC 8693 token exchange, issue 42): it exchanges the person's access token
// for the resource for a short-lived token of its own that says it acts for them (`act`), then asks Attest
// what the token says (/introspect, as the agent).
//   AGENT_ID=app_… AGENT_SECRET=sk_… SUBJECT_TOKEN=eyJ… node examples/delegating-agent/exchange.mjs [SCOPE]
// SUBJECT_TOKEN is the person's access token for a registered resource: one they gave this agent (its own
// sign-in with resource=…), or one another app got, when the operator lets the agent act for people
// (pnpm --silent manage app create … --may-act-for-users). SCOPE narrows the token (never widens it);
// RESOURCE_CALL, when set, is called with the delegated token (Authorization: Bearer) and its answer shown.
import * as oidc from 'openid-client';

const ISSUER = process.env.ISSUER ?? 'http://localhost:4000';
const { AGENT_ID, AGENT_SECRET, SUBJECT_TOKEN, RESOURCE_CALL } = process.env;
if (!AGENT_ID || !AGENT_SECRET || !SUBJECT_TOKEN) {
  console.error(
    'Set AGENT_ID and AGENT_SECRET (from: pnpm --silent manage app create --name … --redirect-uri … ' +
      '--may-act-for-users) and SUBJECT_TOKEN (the person’s access token for a resource)',
  );
  process.exit(1);
}
const scope = process.argv[2];

// http is allowed only for a provider on localhost; a real deployment uses https
const options = new URL(ISSUER).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined;
const config = await oidc.discovery(
  new URL(ISSUER),
  AGENT_ID,
  undefined,
  oidc.ClientSecretBasic(AGENT_SECRET),
  options,
);

let delegated;
try {
  delegated = await oidc.genericGrantRequest(config, 'urn:ietf:params:oauth:grant-type:token-exchange', {
    subject_token: SUBJECT_TOKEN,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    ...(scope ? { scope } : {}),
  });
} catch (err) {
  // e.g. unauthorized_client (not allowed to act for people), invalid_scope (a wider scope), invalid_grant
  console.error(`exchange refused: ${err.error ?? err.message}: ${err.error_description ?? ''}`);
  process.exit(2);
}

// what the token says, as Attest sees it: the person (sub), the agent acting for them (act), the scope
const res = await fetch(`${ISSUER}/introspect`, {
  method: 'POST',
  headers: {
    authorization: `Basic ${Buffer.from(`${AGENT_ID}:${AGENT_SECRET}`).toString('base64')}`,
    'content-type': 'application/x-www-form-urlencoded',
  },
  body: new URLSearchParams({ token: delegated.access_token }),
});
const introspection = await res.json();
const out = {
  issued_token_type: delegated.issued_token_type,
  expires_in: delegated.expires_in,
  scope: delegated.scope,
  active: introspection.active,
  sub: introspection.sub,
  act: introspection.act,
  acr: introspection.acr,
};
if (RESOURCE_CALL) {
  const call = await fetch(RESOURCE_CALL, { headers: { authorization: `Bearer ${delegated.access_token}` } });
  out.resource_call = { status: call.status };
}
console.log(JSON.stringify(out, null, 2));
