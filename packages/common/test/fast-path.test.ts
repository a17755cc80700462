import { createHash } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { ErrorRequestHandler, Express, RequestHandler, Router } from 'express';
import request from 'supertest';
import winston from 'winston';
import { FLUSH_INTERVAL_MS } from '../src/http/request-line';
import {
  createExpressServer,
  createLogger,
  createServiceApps,
  endpoint,
  AppError,
  errors,
  formBody,
  queryParam,
  sendJson,
  sendJsonBody,
  toAppError,
} from '../src';

/**
 * The same endpoint registered twice, once with { fast: true } (answered before Express's router) and
 * once without: every answer must be the same but for the path and the request id.
 */
const BODY = Buffer.from(JSON.stringify({ hello: 'world' }));
const ETAG = `W/"${createHash('sha1').update(BODY).digest('hex').slice(0, 16)}"`;

const cors: RequestHandler = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', '*');
  if (req.method === 'OPTIONS') {
    res.set({ 'Access-Control-Allow-Methods': 'GET', Allow: 'GET, OPTIONS' }).status(204).end();
    return;
  }
  next();
};

/** A conditional GET: ETag and Cache-Control, 304 when If-None-Match names the document. */
const document: RequestHandler = (req, res) => {
  res.setHeader('Cache-Control', 'public, max-age=60');
  res.setHeader('ETag', ETAG);
  if (req.get('if-none-match') === ETAG) return void res.status(304).end();
  sendJsonBody(res, BODY);
};

/** A form POST: the body read by its own step, a field required, the answer naming it. */
const echo: RequestHandler = (req, res) => {
  const { name } = req.body as { name?: unknown };
  if (typeof name !== 'string') throw errors.required('name');
  res.setHeader('Cache-Control', 'no-store');
  sendJson(res, { name, route: (req.route as { path: string }).path.replace(/^\/(fast|slow)/, '') });
};

/** A lookup with a path parameter and a query, which fails asynchronously for an unknown id. */
const item: RequestHandler = async (req, res) => {
  await new Promise((r) => setImmediate(r));
  if (req.params.id === 'missing') throw errors.notFound('No such item.', 'id');
  const color = queryParam(req.query, 'color');
  if (color === 'bad') throw errors.invalidParameter('color', 'color must not be bad.');
  res.setHeader('Item-Color', color ?? 'none');
  res.json({ id: req.params.id, color: color ?? null, route: (req.route as { path: string }).path });
};

/** An endpoint's own error step (as /token names its errors for OAuth): renames each error, then passes it on. */
const renameErrors: ErrorRequestHandler = (err, req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  const appError = toAppError(err, req);
  next(appError.withExtra({ error: `renamed_${appError.code}` }));
};

/** A step that fails with an error that asks for a header. */
const refuse: RequestHandler = (_req, _res, next) =>
  next(new AppError('refused', 401, 'Refused.', 'name', { headers: { 'WWW-Authenticate': 'Basic' } }));

function build() {
  const chunks: string[] = [];
  const logger = createLogger('fast-test', 'info');
  logger.clear();
  logger.add(
    new winston.transports.Stream({
      stream: new Writable({ write: (chunk, _enc, done) => (chunks.push(String(chunk)), done()) }),
    }),
  );
  const apps = createServiceApps({
    service: 'fast-test',
    logger,
    readiness: { shuttingDown: false, checks: [] },
    adminToken: 'a'.repeat(40),
    trustProxy: 'false',
    bodyLimit: '1kb',
    publicUrl: 'https://fast.example',
    publicRoutes(router: Router) {
      for (const [prefix, fast] of [
        ['/fast', true],
        ['/slow', false],
      ] as const) {
        endpoint(router, `${prefix}/doc`, { GET: [cors, document], OPTIONS: [cors] }, undefined, { fast });
        endpoint(router, `${prefix}/item/:id`, { GET: [cors, item], OPTIONS: [cors] }, undefined, { fast });
        endpoint(router, `${prefix}/form`, { POST: [formBody('1kb'), echo] }, undefined, { fast });
        endpoint(router, `${prefix}/named`, { POST: [formBody('1kb'), refuse] }, undefined, {
          fast,
          onError: renameErrors,
        });
        endpoint(router, `${prefix}/named-ok`, { POST: [formBody('1kb'), echo] }, undefined, {
          fast,
          onError: renameErrors,
        });
      }
    },
    adminRoutes() {},
  });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ...apps, lines };
}

/** The response's headers, less what differs from request to request. */
const headersOf = (res: request.Response) => {
  const { date: _date, 'x-request-id': _id, ...rest } = res.headers as Record<string, string>;
  return rest;
};

/** Counts the requests Express's router sees. */
function routerCalls(app: Express): () => number {
  const router = (app as unknown as { router: { handle: (...args: unknown[]) => unknown } }).router;
  const spy = jest.spyOn(router, 'handle');
  return () => spy.mock.calls.length;
}

describe('the fast path (hot GET endpoints answered before the router)', () => {
  const h = build();
  const calls = routerCalls(h.publicApp);
  const both = async (path: string, set: Record<string, string> = {}, method: 'get' | 'options' | 'head' = 'get') => {
    const before = calls();
    const fast = await request(h.publicApp)[method](`/fast${path}`).set(set);
    const routed = calls() - before;
    const slow = await request(h.publicApp)[method](`/slow${path}`).set(set);
    return { fast, slow, routed };
  };

  it('answers a GET without the router, with the same status, headers and body (HSTS, CORS, ETag)', async () => {
    const { fast, slow, routed } = await both('/doc');
    expect(routed).toBe(0);
    expect(fast.status).toBe(200);
    expect(fast.body).toEqual({ hello: 'world' });
    expect(headersOf(fast)).toEqual(headersOf(slow));
    expect(fast.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      etag: ETAG,
      'cache-control': 'public, max-age=60',
      'content-type': 'application/json; charset=utf-8',
    });
    expect(fast.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers a conditional GET with 304 alike', async () => {
    const { fast, slow, routed } = await both('/doc', { 'If-None-Match': ETAG });
    expect(routed).toBe(0);
    expect(fast.status).toBe(304);
    expect(fast.text).toBe('');
    expect(headersOf(fast)).toEqual(headersOf(slow));
  });

  it('echoes a sane X-Request-Id and replaces an insane one, as Express does', async () => {
    const sane = await both('/doc', { 'X-Request-Id': 'abc-123' });
    expect(sane.fast.headers['x-request-id']).toBe('abc-123');
    expect(sane.slow.headers['x-request-id']).toBe('abc-123');
    const insane = await both('/doc', { 'X-Request-Id': 'a b' });
    expect(insane.fast.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('gives path parameters, the query and the route pattern as the router does', async () => {
    const { fast, slow, routed } = await both('/item/42?color=red');
    expect(routed).toBe(0);
    expect(fast.status).toBe(200);
    expect(fast.body).toEqual({ id: '42', color: 'red', route: '/fast/item/:id' });
    expect(slow.body).toEqual({ id: '42', color: 'red', route: '/slow/item/:id' });
    expect(headersOf(fast)).toEqual(headersOf(slow));
  });

  it('answers errors (a rejected step, a bad parameter) with the app’s error handler alike', async () => {
    for (const path of ['/item/missing', '/item/1?color=bad', '/item/1?color=a&color=b']) {
      const { fast, slow, routed } = await both(path);
      expect(routed).toBe(0);
      expect(fast.status).toBe(slow.status);
      expect(fast.status).toBeGreaterThanOrEqual(400);
      expect(fast.body).toEqual(slow.body);
      expect(fast.body.code).toEqual(expect.any(String));
      expect(headersOf(fast)).toEqual(headersOf(slow));
    }
  });

  it('answers a POST without the router alike: its body read by its steps, errors by the error handler', async () => {
    const post = async (body: string, type = 'application/x-www-form-urlencoded') => {
      const before = calls();
      const fast = await request(h.publicApp).post('/fast/form').set('Content-Type', type).send(body);
      const routed = calls() - before;
      const slow = await request(h.publicApp).post('/slow/form').set('Content-Type', type).send(body);
      expect(routed).toBe(0);
      expect(fast.status).toBe(slow.status);
      expect(fast.body).toEqual(slow.body);
      expect(headersOf(fast)).toEqual(headersOf(slow));
      return fast;
    };
    const ok = await post('name=ada');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ name: 'ada', route: '/form' });
    expect(ok.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect((await post('other=1')).status).toBe(400);
    expect((await post(`name=${'x'.repeat(2000)}`)).status).toBe(413);
    const get = await request(h.publicApp).get('/fast/form');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toMatch(/^POST\b/);
    expect(get.headers.allow).toBe((await request(h.publicApp).get('/slow/form')).headers.allow);
  });

  it('runs an endpoint’s own error step before the app’s error handler alike (its steps’ errors and its 405)', async () => {
    const post = async (path: string, body: string, type = 'application/x-www-form-urlencoded') => {
      const before = calls();
      const fast = await request(h.publicApp).post(`/fast${path}`).set('Content-Type', type).send(body);
      const routed = calls() - before;
      const slow = await request(h.publicApp).post(`/slow${path}`).set('Content-Type', type).send(body);
      expect(routed).toBe(0);
      expect(fast.status).toBe(slow.status);
      expect(fast.body).toEqual(slow.body);
      expect(headersOf(fast)).toEqual(headersOf(slow));
      return fast;
    };
    const refused = await post('/named', 'name=ada');
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ error: 'renamed_refused', code: 'refused', detail: 'Refused.', attribute: 'name' });
    expect(refused.headers['www-authenticate']).toBe('Basic');
    expect(refused.headers['cache-control']).toBe('no-store');
    // an error of the endpoint's own form parser, and of a later step, renamed alike
    const tooLarge = await post('/named-ok', `name=${'x'.repeat(2000)}`);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error).toBe('renamed_payload_too_large');
    const missing = await post('/named-ok', 'other=1');
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: 'renamed_required', attribute: 'name' });
    expect((await post('/named-ok', 'name=ada')).body).toEqual({ name: 'ada', route: '/named-ok' });
    // the 405 of a method the endpoint does not take goes through it too (through Express: GET is not fast here)
    const get = await request(h.publicApp).get('/fast/named');
    expect(get.status).toBe(405);
    expect(get.body.error).toBe('renamed_method_not_allowed');
  });

  it('leaves other methods, HEAD, percent-encoded and deeper paths to Express (preflight, 405 with Allow)', async () => {
    const preflight = await both('/doc', { Origin: 'https://a.example' }, 'options');
    expect(preflight.routed).toBe(1);
    expect(preflight.fast.status).toBe(204);
    expect(headersOf(preflight.fast)).toEqual(headersOf(preflight.slow));
    const head = await both('/doc', {}, 'head');
    expect(head.routed).toBe(1);
    expect(head.fast.status).toBe(200);
    const post = await request(h.publicApp).post('/fast/doc');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD, OPTIONS');
    const slowPost = await request(h.publicApp).post('/slow/doc');
    expect(post.body).toEqual(slowPost.body);
    for (const path of ['/item/%34%32', '/item/%zz', '/item/1/2']) {
      const { fast, slow, routed } = await both(path);
      expect(routed).toBe(1);
      expect(fast.status).toBe(slow.status);
      // the same answer, but for the path it names
      const unpathed = (body: object) => JSON.parse(JSON.stringify(body).replace(/\/(fast|slow)\//g, '/'));
      expect(unpathed(fast.body)).toEqual(unpathed(slow.body));
    }
  });

  it('counts the requests in the metrics under the route pattern and writes the log line', async () => {
    const id = `fast-${Date.now()}`;
    await request(h.publicApp).get('/fast/item/7').set('X-Request-Id', id).expect(200);
    await request(h.publicApp).get('/fast/item/missing').expect(404);
    await new Promise((r) => setImmediate(r));
    const metrics = await request(h.adminApp).get('/metrics').expect(200);
    expect(metrics.text).toMatch(
      /http_requests_total\{method="GET",route="\/fast\/item\/:id",status="200",service="fast-test"\} [1-9]/,
    );
    expect(metrics.text).toMatch(
      /http_requests_total\{method="GET",route="\/fast\/item\/:id",status="404",service="fast-test"\} [1-9]/,
    );
    // request lines go out in batches, at most FLUSH_INTERVAL_MS late
    let line = h.lines().find((l) => l.request_id === id);
    for (let i = 0; !line && i < 50; i++) {
      await new Promise((r) => setTimeout(r, FLUSH_INTERVAL_MS));
      line = h.lines().find((l) => l.request_id === id);
    }
    expect(line).toEqual({
      level: 'info',
      message: 'request',
      service: 'fast-test',
      method: 'GET',
      path: '/fast/item/7',
      status: 200,
      request_id: id,
      duration_ms: expect.any(Number),
      timestamp: expect.any(String),
    });
  });
});

describe('the fast path on the server services listen with (createExpressServer)', () => {
  it('keeps the prototypes the server made the request and response with (none set again per request)', async () => {
    const h = build();
    // as a service starts: its apps finished (the fast path installed), then served
    const server = createExpressServer(h.publicApp);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const setPrototypeOf = jest.spyOn(Object, 'setPrototypeOf');
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/fast/doc`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ hello: 'world' });
      const onRequestObjects = setPrototypeOf.mock.calls.filter(
        ([target]) => target instanceof IncomingMessage || target instanceof ServerResponse,
      );
      expect(onRequestObjects).toEqual([]);
    } finally {
      setPrototypeOf.mockRestore();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
