// An agent that asks a person to approve one payment before it makes it (OpenID Connect CIBA with an RFC 9396
// `payment` authorization detail, issue 42): Attest shows the request on the person's account page, in words;
// the person approves it with a passkey or their password (or denies it); the agent's poll then gets tokens
// that carry exactly what was approved.
//   AGENT_ID=app_… AGENT_SECRET=sk_… LOGIN_HINT=<the person's sub for this app> \
//     node examples/delegating-agent/approve-payment.mjs 42.50 EUR "Acme Travel" INV-2026-7
// The app needs a CIBA mode: pnpm --silent manage app update app_… --ciba-mode poll
import * as oidc from 'openid-client';

const ISSUER = process.env.ISSUER ?? 'http://localhost:4000';
const { AGENT_ID, AGENT_SECRET, LOGIN_HINT } = process.env;
const [amount, currency, payee, reference] = process.argv.slice(2);
if (!AGENT_ID || !AGENT_SECRET || !LOGIN_HINT || !amount || !currency || !payee) {
  console.error(
    'Set AGENT_ID and AGENT_SECRET (an app with --ciba-mode poll) and LOGIN_HINT (the person’s sub for it), ' +
      'and give AMOUNT CURRENCY PAYEE [REFERENCE]',
  );
  process.exit(1);
}

// http is allowed only for a provider on localhost; a real deployment uses https
const options = new URL(ISSUER).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined;
const config = await oidc.discovery(
  new URL(ISSUER),
  AGENT_ID,
  undefined,
  oidc.ClientSecretBasic(AGENT_SECRET),
  options,
);

const payment = { type: 'payment', amount, currency, payee, ...(reference ? { reference } : {}) };
const bindingMessage = `PAY-${Math.floor(Math.random() * 9000 + 1000)}`;
let tokens;
try {
  const asked = await oidc.initiateBackchannelAuthentication(config, {
    scope: 'openid',
    login_hint: LOGIN_HINT,
    binding_message: bindingMessage, // the person sees it on the account page: show it in your app too
    authorization_details: JSON.stringify([payment]),
  });
  console.error(`Waiting for the person to approve ${bindingMessage} on their account page…`);
  // polls every `interval` seconds (slower after a slow_down) until the person decides or the request expires
  tokens = await oidc.pollBackchannelAuthenticationGrant(config, asked);
} catch (err) {
  // access_denied (the person said no), expired_token (nobody decided in time), unknown_user_id, …
  console.error(`not approved: ${err.error ?? err.message}: ${err.error_description ?? ''}`);
  process.exit(2);
}

const claims = tokens.claims();
console.log(
  JSON.stringify(
    {
      binding_message: bindingMessage,
      // what the person approved, exactly: make the payment only as it says
      authorization_details: tokens.authorization_details,
      approved_at: claims.auth_time,
      acr: claims.acr,
      sub: claims.sub,
    },
    null,
    2,
  ),
);
