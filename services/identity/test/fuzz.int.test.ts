import request from 'supertest';
import {
  fuzzRuns,
  fuzzSeeds,
  fuzzService,
  listen,
  newStats,
  reportStats,
  type FuzzSurface,
  type Listening,
} from '@attest/testing';
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
const AUTHORIZE = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'nonce',
  'response_mode',
  'prompt',
  'max_age',
  'code_challenge',
  'code_challenge_method',
  'login_hint',
];
const TOKEN = ['grant_type', 'code', 'redirect_uri', 'client_id', 'client_secret', 'code_verifier'];

/** Issue #9: random hostile requests to every public identity endpoint; see docs/reliability.md. */
describe('identity fuzz: hostile input never hangs, never 5xx, always the error shape', () => {
  let h: IdentityHarness;
  let server: Listening;
  let surface: FuzzSurface;
  const stats = newStats();

  beforeAll(async () => {
    h = await identityHarness();
    const app = await createApp(h);
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    const flow = await browserFlow(
      agent,
      { response_type: 'code', scope: 'openid email profile', client_id: app.app_id, redirect_uri: REDIRECT_URI },
      user,
    );
    const code = callbackParams(flow).code;
    const exchanged = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    const accessToken = exchanged.body.access_token as string;
    // a live interaction with its CSRF cookie and token, and a signed-in session, so forms get past the first checks
    const started = await request(h.publicApp)
      .get('/authorize')
      .query({ response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI });
    const interaction = new URL(started.headers.location as string, 'http://x').searchParams.get('interaction') ?? '';
    const signin = await request(h.publicApp).get('/signin').query({ interaction });
    const csrfCookie = String(signin.headers['set-cookie']?.[0] ?? '').split(';')[0];
    const session = await h.ctx.sessions.create({ userId: user.user_id, authTime: Math.floor(Date.now() / 1000) });
    const appCredentials: [string, string] = ['Authorization', basic(app.app_id, app.client_secret)];
    const bearer: [string, string] = ['Authorization', `Bearer ${accessToken}`];
    const cookies: [string, string][] = [
      ['Cookie', csrfCookie],
      ['Cookie', `attest_session=${session}; ${csrfCookie}`],
    ];
    surface = {
      endpoints: [
        { path: '/.well-known/openid-configuration', errors: 'json', methods: ['GET', 'OPTIONS'] },
        { path: '/jwks', errors: 'json', methods: ['GET', 'OPTIONS'] },
        { path: '/jwks.json', errors: 'json', methods: ['GET'] },
        {
          path: '/authorize',
          errors: 'page',
          methods: ['GET', 'POST'],
          form: true,
          names: AUTHORIZE,
          headers: cookies,
        },
        {
          path: '/signin',
          errors: 'page',
          methods: ['GET', 'POST'],
          form: true,
          names: ['interaction', 'csrf', 'username', 'password'],
          headers: cookies,
        },
        {
          path: '/consent',
          errors: 'page',
          methods: ['GET', 'POST'],
          form: true,
          names: ['interaction', 'csrf', 'decision'],
          headers: cookies,
        },
        {
          path: '/token',
          errors: 'oauth',
          methods: ['POST', 'OPTIONS'],
          form: true,
          names: TOKEN,
          headers: [appCredentials],
        },
        {
          path: '/introspect',
          errors: 'json',
          methods: ['POST'],
          form: true,
          names: ['token', 'client_id', 'token_type_hint'],
          headers: [appCredentials],
        },
        { path: '/userinfo', errors: 'json', methods: ['GET', 'POST', 'OPTIONS'], headers: [bearer] },
        { path: '/openapi.json', errors: 'json', methods: ['GET'] },
        { path: '/healthz', errors: 'json', methods: ['GET'] },
        { path: '/readyz', errors: 'json', methods: ['GET'] },
      ],
      names: [
        'client_id',
        'client_secret',
        'redirect_uri',
        'response_type',
        'scope',
        'state',
        'nonce',
        'response_mode',
        'prompt',
        'max_age',
        'code_challenge',
        'code_challenge_method',
        'login_hint',
        'grant_type',
        'code',
        'code_verifier',
        'token',
        'interaction',
        'csrf',
        'username',
        'password',
        'decision',
      ],
      values: [
        app.app_id,
        app.client_secret,
        REDIRECT_URI,
        encodeURIComponent(REDIRECT_URI),
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
        accessToken,
        interaction,
        hidden(signin.text, 'csrf'),
        user.username,
        encodeURIComponent(user.password),
        'approve',
        'deny',
      ],
      headers: [appCredentials, bearer, ...cookies],
    };
    server = await listen(h.publicApp);
  }, 120_000);
  afterAll(async () => {
    reportStats('identity', stats);
    await server?.close();
    await h?.close();
  });

  it.each(fuzzSeeds())(
    'seed %i',
    async (seed) => {
      const run = await fuzzService(server.port, surface, { seed, runs: fuzzRuns(), testFile: TEST_FILE, stats });
      if (run.failure) throw new Error(run.failure);
    },
    600_000,
  );
});
