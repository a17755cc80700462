import { gzipSync } from 'node:zlib';
import { Router } from 'express';
import { createServiceApps, endpoint, formBody, jsonBody } from '../src';
import { answered, listen, rawRequest, testLogger, type Listening, type RawRequest } from './support';

/** Issue #9: a request the server cannot read is the client's error (4xx in the shared shape), never a 500. */
describe('requests that cannot be read', () => {
  let server: Listening;
  let admin: Listening;
  beforeAll(async () => {
    const { publicApp, adminApp } = createServiceApps({
      logger: testLogger,
      readiness: { shuttingDown: false, checks: [] },
      adminToken: 'a'.repeat(40),
      trustProxy: 'false',
      bodyLimit: '1kb',
      publicRoutes(router: Router) {
        endpoint(router, '/json', { POST: [jsonBody('1kb'), (req, res) => void res.json(req.body)] });
        endpoint(router, '/form', { POST: [formBody('1kb'), (req, res) => void res.json(req.body)] });
        endpoint(router, '/things/:thing_id', { GET: [(req, res) => void res.json({ id: req.params.thing_id })] });
      },
      adminRoutes(router: Router) {
        router.get('/things/:id', (req, res) => void res.json({ id: req.params.id }));
      },
    });
    server = await listen(publicApp);
    admin = await listen(adminApp);
  });
  afterAll(async () => {
    await server.close();
    await admin.close();
  });

  async function send(req: RawRequest, port = server.port) {
    const res = await rawRequest(port, req);
    if (!answered(res)) throw new Error(`${req.method} ${req.target}: no answer (${res.status})`);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    return { status: res.status, body: JSON.parse(res.text) as Record<string, unknown> };
  }
  const post = (target: string, contentType: string, body: string | Buffer, more: [string, string][] = []) =>
    send({ method: 'POST', target, headers: [['Content-Type', contentType], ...more], body });

  it('a body that is not JSON: 400 invalid_body saying so', async () => {
    expect(await post('/json', 'application/json', '{"a":')).toEqual({
      status: 400,
      body: { code: 'invalid_body', detail: 'The request body is not valid JSON.', attribute: null },
    });
  });

  it('a form with more than 100 fields: 413 payload_too_large saying the limit', async () => {
    const fields = Array.from({ length: 101 }, (_, i) => `p${i}=1`).join('&');
    expect(await post('/form', 'application/x-www-form-urlencoded', fields)).toEqual({
      status: 413,
      body: {
        code: 'payload_too_large',
        detail: 'The form has more than 100 fields; send at most 100.',
        attribute: null,
      },
    });
    const hundred = Array.from({ length: 100 }, (_, i) => `p${i}=1`).join('&');
    expect((await post('/form', 'application/x-www-form-urlencoded', hundred)).status).toBe(200);
  });

  it('a body over the limit: 413 payload_too_large naming the limit in bytes', async () => {
    expect(await post('/json', 'application/json', JSON.stringify({ x: 'y'.repeat(2000) }))).toEqual({
      status: 413,
      body: {
        code: 'payload_too_large',
        detail: 'The request body is larger than 1024 bytes; send a smaller one.',
        attribute: null,
      },
    });
  });

  it('a gzip body that inflates past the limit: 413, not a 500', async () => {
    const bomb = gzipSync(JSON.stringify({ x: '0'.repeat(200000) }));
    const res = await post('/json', 'application/json', bomb, [['Content-Encoding', 'gzip']]);
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  it.each(['gzip', 'deflate', 'br'])(
    'Content-Encoding %s over a body that is not: 400 invalid_body naming the encoding',
    async (encoding) => {
      expect(await post('/json', 'application/json', '{"a":1}', [['Content-Encoding', encoding]])).toEqual({
        status: 400,
        body: {
          code: 'invalid_body',
          detail: `The request body is not valid '${encoding}' data, as its Content-Encoding says; send it uncompressed or compress it correctly.`,
          attribute: null,
        },
      });
    },
  );

  it('a real gzip body is read', async () => {
    const res = await post('/json', 'application/json', gzipSync('{"a":1}'), [['Content-Encoding', 'gzip']]);
    expect(res).toEqual({ status: 200, body: { a: 1 } });
  });

  it('an unknown Content-Encoding: 415 unsupported_encoding', async () => {
    expect(await post('/form', 'application/x-www-form-urlencoded', 'a=1', [['Content-Encoding', 'x-snappy']])).toEqual(
      {
        status: 415,
        body: {
          code: 'unsupported_encoding',
          detail:
            "Content-Encoding 'x-snappy' is not supported; send the body uncompressed, or as gzip, deflate or br.",
          attribute: null,
        },
      },
    );
  });

  it('an unsupported charset: 415 unsupported_charset', async () => {
    expect(await post('/json', 'application/json; charset=koi8-r', '{"a":1}')).toEqual({
      status: 415,
      body: {
        code: 'unsupported_charset',
        detail: "The charset 'KOI8-R' is not supported; send the body as UTF-8.",
        attribute: null,
      },
    });
  });

  it.each(['%zz', '%', '%ff%fe', '%c0%ae', '%E0%A4%A', '%u0041'])(
    'path parameter %s: 400 invalid_parameter naming it',
    async (raw) => {
      expect(await send({ method: 'GET', target: `/things/${raw}` })).toEqual({
        status: 400,
        body: {
          code: 'invalid_parameter',
          detail: 'thing_id is not valid percent-encoded UTF-8 (write each byte as %XX, two hexadecimal digits).',
          attribute: 'thing_id',
        },
      });
    },
  );

  it('a well-formed encoded path parameter is decoded as before', async () => {
    expect(await send({ method: 'GET', target: '/things/caf%C3%A9%2F1' })).toEqual({
      status: 200,
      body: { id: 'café/1' },
    });
  });

  it('a route outside endpoint() with a malformed parameter: 400 invalid_parameter on the path', async () => {
    const res = await send(
      { method: 'GET', target: '/admin/things/%zz', headers: [['Authorization', `Bearer ${'a'.repeat(40)}`]] },
      admin.port,
    );
    expect(res).toEqual({
      status: 400,
      body: {
        code: 'invalid_parameter',
        detail: 'The URL path is not valid percent-encoded UTF-8 (write each byte as %XX, two hexadecimal digits).',
        attribute: null,
      },
    });
  });
});
