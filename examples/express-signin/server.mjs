// A server-side app that signs users in with Attest: openid-client, authorization code + PKCE.
//   APP_ID=app_… CLIENT_SECRET=sk_… node examples/express-signin/server.mjs
// Register http://localhost:3000/callback as the app's redirect URI and http://localhost:3000/ as where
// sign-out returns to: pnpm manage app create … --redirect-uri …/callback --post-logout-redirect-uri …/
// /login/orb (or REQUIRE_ORB=1 for every sign-in) asks for an orb-verified person: acr urn:attest:loa:orb made
// essential with the claims parameter; a person verified on a device only comes back with
// error=unmet_authentication_requirements.
import { randomBytes } from 'node:crypto';
import express from 'express';
import * as oidc from 'openid-client';

const ISSUER = process.env.ISSUER ?? 'http://localhost:4000';
const PORT = Number(process.env.PORT ?? 3000);
const APP_URL = process.env.APP_URL ?? `http://localhost:${PORT}`;
const { APP_ID, CLIENT_SECRET } = process.env;
if (!APP_ID || !CLIENT_SECRET) {
  console.error(
    'Set APP_ID and CLIENT_SECRET (from: pnpm --silent manage app create --name … --redirect-uri ' +
      `${APP_URL}/callback --post-logout-redirect-uri ${APP_URL}/)`,
  );
  process.exit(1);
}

// http is allowed only for a provider on localhost; a real deployment uses https
const options = new URL(ISSUER).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined;
const config = await oidc.discovery(new URL(ISSUER), APP_ID, undefined, oidc.ClientSecretBasic(CLIENT_SECRET), options);
const redirectUri = `${APP_URL}/callback`;
// where Attest sends the browser back after sign-out: registered for the app exactly like redirectUri
const postLogoutRedirectUri = `${APP_URL}/`;

// Sessions in memory, keyed by a random cookie: enough for an example (use a session store in production).
const sessions = new Map();
const sessionOf = (req) => sessions.get(/(?:^|;\s*)sid=([0-9a-f]{32})/.exec(req.headers.cookie ?? '')?.[1]);
const startSession = (res, data) => {
  const sid = randomBytes(16).toString('hex');
  sessions.set(sid, data);
  res.cookie('sid', sid, { httpOnly: true, sameSite: 'lax', path: '/' });
  return sid;
};
const ORB = 'urn:attest:loa:orb';
const REQUIRE_ORB = process.env.REQUIRE_ORB === '1';
const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const app = express();

app.get('/', (req, res) => {
  const session = sessionOf(req);
  if (!session?.claims)
    return res.send(
      '<h1>Example app</h1><p><a href="/login">Sign in with Attest</a></p>' +
        '<p><a href="/login/orb">Sign in, orb-verified people only</a></p>',
    );
  const level = session.claims[`${ISSUER}/v1`]?.verification_level;
  res.send(
    `<h1>Signed in</h1><p id="sub">sub: ${escape(session.claims.sub)}</p><p id="level">verification level: ${escape(level)}</p>` +
      `<p id="acr">acr: ${escape(session.claims.acr)}</p>` +
      `<pre id="claims">${escape(JSON.stringify(session.claims, null, 2))}</pre><form method="post" action="/logout"><button>Sign out</button></form>`,
  );
});

async function login(res, orbOnly) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  startSession(res, { verifier, state, nonce });
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    // acr essential: never a lower level (acr_values alone would only be a wish)
    ...(orbOnly ? { claims: JSON.stringify({ id_token: { acr: { essential: true, values: [ORB] } } }) } : {}),
  });
  res.redirect(url.href);
}
app.get('/login', (_req, res) => login(res, REQUIRE_ORB));
app.get('/login/orb', (_req, res) => login(res, true));

app.get('/callback', async (req, res) => {
  const session = sessionOf(req);
  if (!session?.verifier) return res.status(400).send('No sign-in in progress. <a href="/">Start again</a>');
  try {
    const tokens = await oidc.authorizationCodeGrant(config, new URL(req.originalUrl, APP_URL), {
      pkceCodeVerifier: session.verifier,
      expectedState: session.state,
      expectedNonce: session.nonce,
    });
    // the id_token's signature, issuer, audience and nonce are checked by openid-client
    Object.assign(session, { verifier: undefined, claims: tokens.claims(), idToken: tokens.id_token });
    res.redirect('/');
  } catch (err) {
    if (err.error === 'unmet_authentication_requirements')
      return res
        .status(403)
        .send('<p id="unmet">This app is for orb-verified people only.</p><p><a href="/">Back</a></p>');
    res.status(400).send(`Sign-in failed: ${escape(err.error ?? err.message)}`);
  }
});

app.post('/logout', (req, res) => {
  const sid = /(?:^|;\s*)sid=([0-9a-f]{32})/.exec(req.headers.cookie ?? '')?.[1];
  const session = sessions.get(sid);
  sessions.delete(sid);
  res.clearCookie('sid', { path: '/' });
  // RP-initiated logout when the provider offers it (end_session_endpoint); otherwise a local sign-out
  const endSession = config.serverMetadata().end_session_endpoint;
  if (endSession && session?.idToken) {
    const url = oidc.buildEndSessionUrl(config, {
      id_token_hint: session.idToken,
      post_logout_redirect_uri: postLogoutRedirectUri,
    });
    return res.redirect(url.href);
  }
  res.redirect('/');
});

app.listen(PORT, () => console.log(`express-signin listening on ${APP_URL}`));
