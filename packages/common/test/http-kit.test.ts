import { Router } from 'express';
import request from 'supertest';
import { createServiceApps, endpoint, errors, formBody, jsonBody, type Readiness } from '../src';
import { testLogger } from './support';

const ADMIN_TOKEN = 'a'.repeat(40);

function build(readiness: Readiness = { shuttingDown: false, checks: [] }) {
  return createServiceApps({
    logger: testLogger,
    readiness,
    adminToken: ADMIN_TOKEN,
    trustProxy: 'false',
    bodyLimit: '1kb',
    publicRoutes(router: Router) {
      endpoint(router, '/things', {
        GET: [(_req, res) => void res.json({ ok: true })],
        POST: [jsonBody('1kb'), (req, res) => void res.status(201).json(req.body)],
      });
      endpoint(router, '/form', { POST: [formBody('1kb'), (req, res) => void res.json(req.body)] });
      endpoint(router, '/boom', {
        GET: [
          () => {
            throw new Error('secret internals at /etc/passwd');
          },
        ],
      });
      endpoint(router, '/async-unavailable', {
        GET: [
          async () => {
            throw errors.unavailable('database');
          },
        ],
      });
    },
    adminRoutes(router: Router) {
      router.get('/ping', (_req, res) => void res.json({ pong: true }));
    },
  });
}

describe('http kit', () => {
  const { publicApp, adminApp } = build();

  it('answers unknown routes with 404 not_found in the shared shape', async () => {
    const res = await request(publicApp).get('/no/such/route');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'not_found', detail: 'No endpoint at GET /no/such/route.', attribute: null });
  });

  it('answers a wrong method with 405 method_not_allowed and an Allow header', async () => {
    const res = await request(publicApp).delete('/things');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.body).toEqual({
      code: 'method_not_allowed',
      detail: "HTTP method 'DELETE' is not allowed for this endpoint.",
      attribute: null,
    });
  });

  it('honours a sane X-Request-Id and makes one otherwise', async () => {
    const given = await request(publicApp).get('/things').set('X-Request-Id', 'req-123');
    expect(given.headers['x-request-id']).toBe('req-123');
    const bad = await request(publicApp).get('/things').set('X-Request-Id', 'x'.repeat(300));
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const none = await request(publicApp).get('/things');
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(none.headers['x-powered-by']).toBeUndefined();
  });

  it('refuses bodies over the limit with 413 and malformed JSON with 400', async () => {
    const big = await request(publicApp)
      .post('/things')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ x: 'y'.repeat(2000) }));
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('payload_too_large');
    const bad = await request(publicApp).post('/things').set('content-type', 'application/json').send('{"x":');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_body');
  });

  it('turns an unexpected error into a bare 500 with no internals', async () => {
    const res = await request(publicApp).get('/boom');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ code: 'internal_error', detail: 'An unexpected error occurred.', attribute: null });
    expect(JSON.stringify(res.body)).not.toContain('passwd');
  });

  it('renders storage outages as 503 service_unavailable with Retry-After', async () => {
    const res = await request(publicApp).get('/async-unavailable');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toEqual({
      code: 'service_unavailable',
      detail: 'The database is temporarily unavailable; try again shortly.',
      attribute: null,
    });
  });

  it('serves health on both listeners and the admin API only with the admin token', async () => {
    expect((await request(publicApp).get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await request(publicApp).get('/admin/ping')).status).toBe(404);
    const none = await request(adminApp).get('/admin/ping');
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await request(adminApp).get('/admin/ping').set('Authorization', 'Bearer wrong')).status).toBe(401);
    const ok = await request(adminApp).get('/admin/ping').set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ pong: true });
  });

  it('exposes Prometheus metrics on the admin port only, labelled by route pattern', async () => {
    await request(publicApp).get('/things');
    await request(publicApp).get('/no/such/route/123');
    const res = await request(adminApp).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/http_requests_total\{[^}]*method="GET",route="\/things",status="200"[^}]*\} [1-9]/);
    expect(res.text).toMatch(/http_requests_total\{[^}]*route="unmatched",status="404"/);
    expect(res.text).not.toContain('/no/such/route/123');
    expect(res.text).toContain('process_cpu_user_seconds_total');
    expect((await request(publicApp).get('/metrics')).status).toBe(404);
  });

  it('shows a degraded check and the detail a check reports; the rule decides whether degraded is ready', async () => {
    const readiness: Readiness = {
      shuttingDown: false,
      checks: [
        { name: 'database', check: async () => undefined },
        { name: 'chain', check: async () => ({ status: 'degraded', detail: { lag_blocks: 7 } }) },
      ],
    };
    const { publicApp: app } = build(readiness);
    const strict = await request(app).get('/readyz');
    expect(strict.status).toBe(503);
    expect(strict.body).toEqual({
      status: 'unavailable',
      checks: { database: 'ok', chain: 'degraded' },
      detail: { chain: { lag_blocks: 7 } },
    });
    readiness.rule = (ok) => ok.database;
    const lenient = await request(app).get('/readyz');
    expect(lenient.status).toBe(200);
    expect(lenient.body.status).toBe('ready');
    expect(lenient.body.checks.chain).toBe('degraded');
  });

  it('reports readiness from its checks and turns it off while shutting down', async () => {
    const readiness: Readiness = { shuttingDown: false, checks: [{ name: 'database', check: async () => undefined }] };
    const { publicApp: app } = build(readiness);
    expect((await request(app).get('/readyz')).body).toEqual({ status: 'ready', checks: { database: 'ok' } });
    readiness.checks.push({ name: 'cache', check: () => Promise.reject(new Error('down')) });
    const down = await request(app).get('/readyz');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'unavailable', checks: { database: 'ok', cache: 'unavailable' } });
    readiness.checks.pop();
    readiness.shuttingDown = true;
    const stopping = await request(app).get('/readyz');
    expect(stopping.status).toBe(503);
    expect(stopping.body.status).toBe('shutting_down');
  });
});
