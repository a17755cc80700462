import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@attest/common';
import { demoAgent, EXCHANGE_SCOPES, TRIPS_SCOPES, type AgentsState, type ExchangeScope } from './agents';
import { ensureDemoClient, ensureDemoResource } from './registration';
import { demoPage, type DemoView } from './page';

type OpenIdClient = typeof import('openid-client');

export interface DemoOptions {
  issuer: string;
  adminUrl: string;
  adminToken: string;
  port: number;
  dataDir: string;
  logger: Logger;
}

export interface RunningDemo {
  url: string;
  /** The demo's app (client_id) at the provider. */
  appId: string;
  stop(): Promise<void>;
}

const COOKIE = 'attest_demo';
const PENDING_MS = 10 * 60 * 1000;

/** The most a demo form's body may be (its one field is short). */
const FORM_LIMIT = 4096;

interface Pending {
  verifier: string;
  nonce: string;
  at: number;
  /** signin: the demo's sign-in; agent: the person letting the demo's agent act for them on the trips API. */
  kind: 'signin' | 'agent';
}
interface Signed {
  claims: Record<string, unknown>;
  idToken: string;
  agents: AgentsState;
}

/** A small urlencoded form body (the demo's own forms), or null when it is larger than FORM_LIMIT. */
const readForm = (req: http.IncomingMessage): Promise<URLSearchParams | null> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= FORM_LIMIT) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > FORM_LIMIT ? null : new URLSearchParams(Buffer.concat(chunks).toString())));
    req.on('error', reject);
  });

const cookieOf = (req: http.IncomingMessage) =>
  /(?:^|;\s*)attest_demo=([0-9a-f]{64})/.exec(req.headers.cookie ?? '')?.[1];

/**
 * The demo relying party of `pnpm start`: "Sign in" runs the code flow with PKCE (openid-client)
 * against the local provider and shows the verified claims (a toggle asks for orb-verified people only, an
 * essential acr); "Sign out" ends the provider's session too
 * (RP-Initiated Logout through the discovery's end_session_endpoint, back to the registered /signed-out).
 * Its agents section (issue 42) lets the demo act as an agent for the signed-in person: a token exchange
 * (RFC 8693) of the token they gave it for its trips API, and a payment they approve on their account page
 * (CIBA). Its state lives in memory: a restart signs everyone out.
 */
export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const oidc: OpenIdClient = await import('openid-client');
  const url = `http://localhost:${options.port}`;
  const signedOutUri = `${url}/signed-out`;
  const client = await ensureDemoClient(options, options.dataDir, {
    redirectUri: `${url}/callback`,
    postLogoutRedirectUri: signedOutUri,
  });
  // the trips API the person lets the demo's agent act on (a resource: RFC 8707)
  const resource = await ensureDemoResource(options, { uri: `${url}/trips`, scopes: [...TRIPS_SCOPES] });
  const agent = demoAgent(oidc, options.logger);
  const insecure = new URL(options.issuer).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined;
  // Discovered on first use, not at start: the issuer's public address may be a gateway that comes up
  // after this process (and a failed discovery is tried again at the next request).
  let discovered: ReturnType<typeof oidc.discovery> | undefined;
  const discover = () =>
    (discovered ??= oidc
      // HTTP Basic, as the app is registered (client_secret_basic): /introspect takes no other
      .discovery(
        new URL(options.issuer),
        client.app_id,
        undefined,
        oidc.ClientSecretBasic(client.client_secret),
        insecure,
      )
      .catch((err: unknown) => {
        discovered = undefined;
        throw err;
      }));
  const pending = new Map<string, Pending>();
  /** Sign-outs sent to the provider (state → when): only the demo's own land as "signed out". */
  const logouts = new Map<string, number>();
  const sessions = new Map<string, Signed>();

  const send = (res: http.ServerResponse, status: number, view: DemoView) =>
    void res
      .writeHead(status, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy':
          "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' " +
          new URL(options.issuer).origin +
          "; frame-ancestors 'none'",
        'referrer-policy': 'no-referrer',
      })
      .end(demoPage(view));
  const redirect = (res: http.ServerResponse, location: string, cookie?: string) =>
    void res
      .writeHead(303, { location, 'cache-control': 'no-store', ...(cookie ? { 'set-cookie': cookie } : {}) })
      .end();
  const sessionCookie = (id: string) => `${COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax`;
  const account = `${options.issuer}/account`;

  /** The code flow's start: the demo's sign-in, or (agent) the person's consent to the trips API for its agent. */
  const authorize = async (kind: Pending['kind'], extra: Record<string, string>) => {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    for (const [key, p] of pending) if (Date.now() - p.at > PENDING_MS) pending.delete(key);
    pending.set(state, { verifier, nonce, at: Date.now(), kind });
    return {
      redirect_uri: client.redirect_uri,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...extra,
    } as Record<string, string>;
  };

  const login = async (res: http.ServerResponse, query: URLSearchParams) => {
    const params = await authorize('signin', { scope: 'openid email profile' });
    if (query.get('prompt') === 'none') params.prompt = 'none';
    // the "orb-verified people only" toggle: acr made essential, so a person verified on a device only
    // comes back with unmet_authentication_requirements instead of a lower level
    if (query.get('level') === 'orb')
      params.claims = JSON.stringify({ id_token: { acr: { essential: true, values: ['urn:attest:loa:orb'] } } });
    redirect(res, oidc.buildAuthorizationUrl(await discover(), params).href);
  };

  const callback = async (req: http.IncomingMessage, res: http.ServerResponse, current: URL) => {
    const state = current.searchParams.get('state') ?? '';
    const started = pending.get(state);
    pending.delete(state);
    const error = current.searchParams.get('error');
    const signed = signedIn(req);
    // the person declined to let the agent act for them (or Attest refused): said in the agents section
    if (error && started?.kind === 'agent' && signed) {
      signed.agents.error = `The agent may not act for you: ${error}: ${current.searchParams.get('error_description') ?? ''}`;
      return redirect(res, '/#agents');
    }
    if (error)
      return send(res, 200, {
        signedIn: null,
        account,
        error: `${error}: ${current.searchParams.get('error_description') ?? ''}`,
      });
    if (!started)
      return send(res, 400, {
        signedIn: null,
        account,
        error: 'This sign-in was not started here, or it expired. Sign in again.',
      });
    const config = await discover();
    const checks = {
      pkceCodeVerifier: started.verifier,
      expectedState: state,
      expectedNonce: started.nonce,
      idTokenExpected: true,
    };
    if (started.kind === 'agent') return agentCallback(req, res, current, checks);
    const tokens = await oidc.authorizationCodeGrant(config, current, checks);
    const idClaims = tokens.claims()!;
    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
    const id = randomBytes(32).toString('hex');
    sessions.set(id, { claims: { ...idClaims, ...userinfo }, idToken: tokens.id_token!, agents: {} });
    const previous = cookieOf(req);
    if (previous) {
      agent.forget(sessions.get(previous)?.agents);
      sessions.delete(previous);
    }
    redirect(res, '/', sessionCookie(id));
  };

  /** The signed-in person's session, or null. */
  const signedIn = (req: http.IncomingMessage) => {
    const id = cookieOf(req);
    return (id && sessions.get(id)) || null;
  };

  /**
   * Back from the person's consent to the trips API: the code exchanged for their token for it (RFC 8707
   * resource), kept in their session for the agent's exchange. Only for the person signed in here.
   */
  const agentCallback = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    current: URL,
    checks: Parameters<OpenIdClient['authorizationCodeGrant']>[2],
  ) => {
    const signed = signedIn(req);
    if (!signed) return redirect(res, '/');
    const tokens = await oidc.authorizationCodeGrant(await discover(), current, checks, { resource: resource.uri });
    if (tokens.claims()?.sub !== signed.claims.sub) {
      signed.agents.error = 'Someone else than the person signed in here authorized the agent: nothing was kept.';
      return redirect(res, '/#agents');
    }
    signed.agents.granted = {
      accessToken: tokens.access_token,
      scope: tokens.scope ?? '',
      expiresAt: Date.now() + (tokens.expires_in ?? 0) * 1000,
    };
    signed.agents.delegated = undefined;
    signed.agents.error = undefined;
    redirect(res, '/#agents');
  };

  /** GET /agents/authorize: the person lets the demo's agent act for them on the trips API (consent at Attest). */
  const agentAuthorize = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!signedIn(req)) return redirect(res, '/');
    const params = await authorize('agent', { scope: `openid ${resource.scopes.join(' ')}`, resource: resource.uri });
    redirect(res, oidc.buildAuthorizationUrl(await discover(), params).href);
  };

  /** POST /agents/exchange (scope): the agent's token exchange; POST /agents/payment: a payment to approve. */
  const agentAction = async (req: http.IncomingMessage, res: http.ServerResponse, action: 'exchange' | 'payment') => {
    const signed = signedIn(req);
    const form = await readForm(req);
    if (!signed) return redirect(res, '/');
    if (!form) return send(res, 413, { signedIn: null, account, error: 'The form is too large.' });
    const config = await discover();
    if (action === 'payment') await agent.askPayment(config, signed.agents, String(signed.claims.sub));
    else {
      const scope = form.get('scope') ?? '';
      if (!(EXCHANGE_SCOPES as readonly string[]).includes(scope))
        return send(res, 400, {
          signedIn: null,
          account,
          error: `scope must be one of: ${EXCHANGE_SCOPES.join(', ')}.`,
        });
      await agent.exchange(config, signed.agents, scope as ExchangeScope);
    }
    redirect(res, '/#agents');
  };

  /**
   * Sign-out: forgets the demo's session, then (RP-Initiated Logout) sends the browser to the provider's
   * end_session_endpoint with the id_token as the hint, so the provider's session ends too; the provider
   * sends it back to the registered /signed-out with the state.
   */
  const logout = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const id = cookieOf(req);
    const signed = id ? sessions.get(id) : undefined;
    agent.forget(signed?.agents);
    if (id) sessions.delete(id);
    const cleared = `${COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`;
    const config = await discover();
    if (signed && config.serverMetadata().end_session_endpoint) {
      const state = oidc.randomState();
      for (const [key, at] of logouts) if (Date.now() - at > PENDING_MS) logouts.delete(key);
      logouts.set(state, Date.now());
      const end = oidc.buildEndSessionUrl(config, {
        id_token_hint: signed.idToken,
        post_logout_redirect_uri: signedOutUri,
        state,
      });
      return redirect(res, end.href, cleared);
    }
    redirect(res, '/?signed_out=1', cleared);
  };

  /** Back from the provider's end_session_endpoint: a state the demo did not send is not shown as a sign-out. */
  const signedOut = (res: http.ServerResponse, current: URL) => {
    const state = current.searchParams.get('state') ?? '';
    const ours = logouts.delete(state);
    redirect(res, ours ? '/?signed_out=1' : '/');
  };

  const server = http.createServer((req, res) => {
    const current = new URL(req.url ?? '/', url);
    const route = `${req.method} ${current.pathname}`;
    const handle = async () => {
      if (route === 'GET /') {
        const signed = signedIn(req);
        return send(res, 200, {
          signedIn: signed?.claims ?? null,
          account,
          signedOut: current.searchParams.has('signed_out'),
          issuer: options.issuer,
          ...(signed ? { agents: { state: signed.agents, resource, account } } : {}),
        });
      }
      if (route === 'GET /login') return login(res, current.searchParams);
      if (route === 'GET /agents/authorize') return agentAuthorize(req, res);
      if (route === 'POST /agents/exchange') return agentAction(req, res, 'exchange');
      if (route === 'POST /agents/payment') return agentAction(req, res, 'payment');
      // "Check again": the page anew (a POST, so a browser loads it even when only its #fragment is the same)
      if (route === 'POST /agents/check') return redirect(res, '/#agents');
      if (route === 'GET /callback') return callback(req, res, current);
      if (route === 'POST /logout') return logout(req, res);
      if (route === 'GET /signed-out') return signedOut(res, current);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    };
    handle().catch((err: Error) => {
      options.logger.warn('demo request failed', { path: current.pathname, error: err.message });
      if (!res.headersSent) send(res, 502, { signedIn: null, account, error: `Sign-in failed: ${err.message}` });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    appId: client.app_id,
    stop: () => {
      for (const signed of sessions.values()) agent.forget(signed.agents);
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
