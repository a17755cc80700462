import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postToTarget } from '../src';

/**
 * postToTarget reads as much of the answer's body as it is asked to (the webhook delivery log keeps each
 * answer's first 4096 bytes, issue 40 item 13), says when there was more, and reads none when not asked
 * (back-channel logout).
 */
describe('postToTarget: the answer body', () => {
  let server: http.Server;
  let answer: { status: number; body: Buffer | string; stall?: boolean } = { status: 200, body: '' };
  let url: URL;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(answer.status);
        if (answer.stall) res.write(answer.body);
        else res.end(answer.body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const post = (readBody?: number, timeoutMs = 5000) =>
    postToTarget(url, { address: '127.0.0.1', family: 4 }, {}, '{}', timeoutMs, undefined, readBody);

  it('gives the whole of a short answer, not truncated', async () => {
    answer = { status: 201, body: '{"ok":true}' };
    expect(await post(4096)).toEqual({
      statusCode: 201,
      retryAfter: undefined,
      body: '{"ok":true}',
      bodyTruncated: false,
    });
  });

  it('gives the first bytes of a long answer, marked truncated; NUL characters dropped', async () => {
    answer = { status: 500, body: Buffer.concat([Buffer.from('ab\0c'), Buffer.alloc(10000, 'x')]) };
    const got = await post(100);
    expect(got.statusCode).toBe(500);
    expect(got.body).toBe(`abc${'x'.repeat(96)}`);
    expect(got.bodyTruncated).toBe(true);
  });

  it('an answer of exactly the bound is whole', async () => {
    answer = { status: 200, body: 'y'.repeat(64) };
    expect(await post(64)).toMatchObject({ body: 'y'.repeat(64), bodyTruncated: false });
  });

  it('an answer whose body never ends: what came, marked truncated, at the timeout', async () => {
    answer = { status: 200, body: 'partial', stall: true };
    expect(await post(4096, 300)).toMatchObject({ statusCode: 200, body: 'partial', bodyTruncated: true });
  });

  it('reads no body unless asked', async () => {
    answer = { status: 204, body: '' };
    const got = await post();
    expect(got).toEqual({ statusCode: 204, retryAfter: undefined });
  });
});
