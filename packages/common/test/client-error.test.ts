import express from 'express';
import type { ServerHandle } from '../src';
import { answered, rawRequest, type RawRequest, type RawResponse } from './support/raw-http';
import { serveOnFreePorts } from './support';

async function send(port: number, spec: RawRequest): Promise<RawResponse> {
  const res = await rawRequest(port, spec);
  if (!answered(res)) throw new Error(`no answer (${res.status}): ${res.partial}`);
  return res;
}

describe('requests Node cannot parse are answered in the error shape', () => {
  let handle: ServerHandle;
  beforeAll(async () => {
    const app = express();
    app.get('/ok', (_req, res) => void res.json({ ok: true }));
    handle = await serveOnFreePorts(app, express());
  });
  afterAll(() => handle.stop());

  const invalid = {
    code: 'invalid_request',
    detail: 'The request is not valid HTTP/1.1; check its request line and headers.',
    attribute: null,
  };

  it.each<[string, RawRequest]>([
    ['a space in the request target', { method: 'GET', target: '/ok?a=b c' }],
    ['a control character in a header', { method: 'GET', target: '/ok', headers: [['X-Note', 'a\u0001b']] }],
    ['a method that is not a token', { method: 'G(T', target: '/ok' }],
  ])('%s: 400 invalid_request as JSON', async (_name, spec) => {
    const res = await send(handle.publicPort, spec);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.text)).toEqual(invalid);
  });

  it('headers over 16 KB: 431 headers_too_large as JSON', async () => {
    const res = await send(handle.publicPort, {
      method: 'GET',
      target: '/ok',
      headers: [['X-Big', 'a'.repeat(20_000)]],
    });
    expect(res.status).toBe(431);
    expect(JSON.parse(res.text)).toEqual({
      code: 'headers_too_large',
      detail: 'The request line and headers are too large; keep them under 16 KB.',
      attribute: null,
    });
  });

  it('the admin listener answers the same way, and a good request is still served', async () => {
    const bad = await send(handle.adminPort, { method: 'GET', target: '/a b' });
    expect(JSON.parse(bad.text)).toEqual(invalid);
    const good = await send(handle.publicPort, { method: 'GET', target: '/ok' });
    expect(good.status).toBe(200);
    expect(JSON.parse(good.text)).toEqual({ ok: true });
  });
});
