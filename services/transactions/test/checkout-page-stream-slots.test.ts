import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { MemoryBus } from '@attest/common';
import { checkoutPageRoute } from '../src/checkout-page';

/**
 * The payment page's status stream (GET /pay/{id}/events) takes its slot before reading the request and
 * gives it back on close, and one address may hold at most 20. A security review found that a client gone
 * while the request was read never gave its slot back: after 2,000 of them every stream answered 503.
 */
const ID = `pr_${'a'.repeat(32)}`;
const view = {
  id: ID,
  status: 'pending',
  chain: 'worldchain',
  to: `0x${'1'.repeat(40)}`,
  token: null,
  accepted_tokens: [],
  amount_remaining: null,
  price: null,
  expires_at: new Date(Date.now() + 600_000).toISOString(),
  return_url: null,
};

describe('payment page status stream: slots', () => {
  let server: http.Server;
  let port: number;
  let reads = 0;
  beforeAll(async () => {
    const app = express();
    const router = express.Router();
    checkoutPageRoute(router, {
      // the read takes a moment (a cold cache, a busy database): the window a leaving client falls into
      paymentRequests: {
        read: async () => {
          reads++;
          await new Promise((r) => setTimeout(r, 100));
          return { appId: 'app_x', view } as never;
        },
      },
      policies: { policy: async () => ({ displayName: null }) as never },
      bus: new MemoryBus(),
    } as never);
    app.use(router);
    app.use((err: { status?: number }, _req: express.Request, res: express.Response, _n: express.NextFunction) => {
      res.status(err.status ?? 500).end();
    });
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const open = () =>
    new Promise<{ status: number; req: http.ClientRequest }>((resolve) => {
      const req = http.get({ port, host: '127.0.0.1', path: `/pay/${ID}/events` }, (res) =>
        resolve({ status: res.statusCode!, req }),
      );
      req.on('error', () => resolve({ status: -1, req }));
    });
  /** `count` clients ask for the stream and leave once the service is reading their requests. */
  const leaveWhileRead = async (count: number) => {
    const target = reads + count;
    const sockets = Array.from({ length: count }, () => {
      const s = net.connect(port, '127.0.0.1', () => s.write(`GET /pay/${ID}/events HTTP/1.1\r\nHost: x\r\n\r\n`));
      return s;
    });
    while (reads < target) await new Promise((r) => setImmediate(r));
    for (const s of sockets) s.destroy();
  };
  const settle = () => new Promise((r) => setTimeout(r, 300));

  it('one address holds at most 20 streams: 30 asked at once give 20 streams and 10 × 429', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, open));
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(20).fill(200), ...Array(10).fill(429)]);
    for (const a of answers) a.req.destroy();
    await settle();
  });

  it('200 clients gone while their request was read give their slots back: 20 streams open afterwards', async () => {
    const before = reads;
    for (let batch = 0; batch < 20; batch++) await leaveWhileRead(10);
    expect(reads - before).toBe(200);
    await settle();
    const fresh = await Promise.all(Array.from({ length: 20 }, open));
    expect(fresh.map((f) => f.status)).toEqual(Array(20).fill(200));
    for (const f of fresh) f.req.destroy();
    await settle();
  });
});
