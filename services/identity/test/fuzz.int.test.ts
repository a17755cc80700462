import request from 'supertest';
import { describeFuzz, type FuzzSurface } from '@attest/testing';
import {
  basic,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

const TEST_FILE = 'services/identity/test/fuzz.int.test.ts';
const AUTHORIZE = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'nonce', 'response_mode', 'prompt'];
const AUTHORIZE_MORE = ['max_age', 'code_challenge', 'code_challenge_method', 'login_hint'];
const TOKEN = ['grant_type', 'code', 'redirect_uri', 'client_id', 'client_secret', 'code_verifier'];

interface Known {
  app: { app_id: string; client_secret: string };
  user: { username: string; password: string; user_id: string };
  code: string;
  accessToken: string;
  interaction: string;
  csrf: string;
  csrfCookie: string;
  session: string;
}

/** Sets up what gets requests past the first checks: an app, a user, tokens, a live interaction, a session. */
async function known(h: IdentityHarness): Promise<Known> {
  const app = await createApp(h);
  const user = await createUser(h);
  const query = {
    response_type: 'code',
    scope: 'openid email profile',
    client_id: app.app_id,
    redirect_uri: REDIRECT_URI,
  };
  const code = callbackParams(await browserFlow(request.agent(h.publicApp), query, user)).code;
  const exchanged = await request(h.publicApp)
    .post('/token')
    .set('Authorization', basic(app.app_id, app.client_secret))
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
  const started = await request(h.publicApp).get('/authorize').query(query);
  const interaction = new URL(started.headers.location as string, 'http://x').searchParams.get('interaction') ?? '';
  const signin = await request(h.publicApp).get('/signin').query({ interaction });
  const csrfCookie = String(signin.headers['set-cookie']?.[0] ?? '').split(';')[0];
  const { cookie: session } = await h.ctx.tokens.sessions.create({
    userId: user.user_id,
    authTime: Math.floor(Date.now() / 1000),
    amr: ['pwd'],
  });
  const accessToken = exchanged.body.access_token as string;
  return { app, user, code, accessToken, interaction, csrf: hidden(signin.text, 'csrf'), csrfCookie, session };
}

function identitySurface(k: Known): FuzzSurface {
  const appCredentials: [string, string] = ['Authorization', basic(k.app.app_id, k.app.client_secret)];
  const bearer: [string, string] = ['Authorization', `Bearer ${k.accessToken}`];
  const cookies: [string, string][] = [
    ['Cookie', k.csrfCookie],
    ['Cookie', `attest_session=${k.session}; ${k.csrfCookie}`],
  ];
  const redirect = encodeURIComponent(REDIRECT_URI);
  const client = `client_id=${k.app.app_id}&redirect_uri=${redirect}`;
  const form = `interaction=${k.interaction}&csrf=${k.csrf}`;
  const page = { errors: 'page' as const, methods: ['GET', 'POST'], form: true, headers: cookies };
  return {
    endpoints: [
      { path: '/.well-known/openid-configuration', errors: 'json', methods: ['GET', 'OPTIONS'] },
      { path: '/jwks', errors: 'json', methods: ['GET', 'OPTIONS'] },
      { path: '/jwks.json', errors: 'json', methods: ['GET'] },
      {
        ...page,
        path: '/authorize',
        names: [...AUTHORIZE, ...AUTHORIZE_MORE],
        base: [
          `${client}&response_type=code&scope=openid&state=s`,
          `${client}&response_type=code%20id_token&scope=openid%20email&nonce=n&response_mode=form_post`,
          `${client}&response_type=id_token&scope=openid&nonce=n&prompt=none`,
          `${client}&response_type=code&scope=openid&code_challenge_method=S256&code_challenge=${'a'.repeat(43)}`,
        ],
      },
      {
        ...page,
        path: '/signin',
        names: ['interaction', 'csrf', 'username', 'password'],
        base: [`interaction=${k.interaction}`, form, `${form}&username=${k.user.username}&password=wrong`],
      },
      {
        ...page,
        path: '/consent',
        names: ['interaction', 'csrf', 'decision'],
        base: [`interaction=${k.interaction}`, `${form}&decision=approve`, `${form}&decision=deny`],
      },
      {
        path: '/token',
        errors: 'oauth',
        methods: ['POST', 'OPTIONS'],
        form: true,
        names: TOKEN,
        headers: [appCredentials],
        base: [`grant_type=authorization_code&code=${k.code}&redirect_uri=${redirect}`],
      },
      {
        path: '/introspect',
        errors: 'json',
        methods: ['POST'],
        form: true,
        names: ['token', 'client_id', 'token_type_hint'],
        headers: [appCredentials],
        base: [`token=${k.accessToken}`],
      },
      { path: '/userinfo', errors: 'json', methods: ['GET', 'POST', 'OPTIONS'], headers: [bearer] },
      { path: '/openapi.json', errors: 'json', methods: ['GET'] },
      { path: '/healthz', errors: 'json', methods: ['GET'] },
      { path: '/readyz', errors: 'json', methods: ['GET'] },
    ],
    names: [
      ...AUTHORIZE,
      ...AUTHORIZE_MORE,
      ...TOKEN,
      'token',
      'interaction',
      'csrf',
      'username',
      'password',
      'decision',
    ],
    values: [
      k.app.app_id,
      k.app.client_secret,
      REDIRECT_URI,
      redirect,
      'code',
      'id_token',
      'code%20id_token',
      'openid',
      'openid%20email%20profile',
      'form_post',
      'fragment',
      'none',
      'login',
      'consent',
      '0',
      'S256',
      'authorization_code',
      k.accessToken,
      k.interaction,
      k.csrf,
      k.user.username,
      encodeURIComponent(k.user.password),
      'approve',
      'deny',
    ],
    headers: [appCredentials, bearer, ...cookies],
  };
}

/** Issue #9: random hostile requests to every public identity endpoint; see docs/reliability.md. */
describeFuzz('identity', TEST_FILE, {
  harness: () => identityHarness(),
  surface: async (h) => identitySurface(await known(h)),
});
