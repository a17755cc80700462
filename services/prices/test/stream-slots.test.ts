import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createLogger, MemoryBus } from '@attest/common';
import { PriceStream } from '../src/stream/price-stream';

/**
 * The stream's limits (PRICE_STREAM_MAX_PER_ADDRESS, PRICE_STREAM_MAX_CONNECTIONS) count a stream from the
 * moment it is asked for, before anything is read: many asked at once from one address do not get past the
 * limit while the first are still reading, and a client gone during a read gives its slot back.
 * (A security review found both: the counters went up only after the replay read, and a client gone
 * during it never gave its slot back.)
 */
describe('price stream: slots are taken before reading and given back by clients that leave', () => {
  let server: http.Server;
  let port: number;
  let stream: PriceStream;
  let replayReads = 0;
  beforeAll(async () => {
    const answer = { etag: '"t1"', body: Buffer.from('{}') };
    const prices = {
      answer: async () => answer,
      answerWithChange: async () => answer,
      answerFrom: () => ({ error: { code: 'x', detail: 'x' } }),
      version: async () => 10,
    };
    stream = new PriceStream(prices as never, {
      maxConnections: 50,
      maxPerAddress: 5,
      heartbeatMs: 60_000,
      history: { changes: async () => [] } as never,
      // a Last-Event-ID of an older version makes each request read the store: a slow read opens the window
      store: {
        writesSince: async () => {
          replayReads++;
          await new Promise((r) => setTimeout(r, 100));
          return [];
        },
        latestAsOf: async () => ({ fx: [], quotes: [] }),
      } as never,
      bus: new MemoryBus(),
      logger: createLogger('prices', 'silent'),
    });
    const app = express();
    app.get('/s', (req, res) => {
      stream
        .subscribe(req, res, { tokens: ['ETH'], fiats: ['USD'], change: false })
        .catch((e: { status?: number }) => res.status(e.status ?? 500).end());
    });
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    stream.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const open = (lastEventId?: string) =>
    new Promise<{ status: number; req: http.ClientRequest }>((resolve) => {
      const req = http.get(
        { port, host: '127.0.0.1', path: '/s', headers: lastEventId ? { 'last-event-id': lastEventId } : {} },
        (res) => resolve({ status: res.statusCode!, req }),
      );
      req.on('error', () => resolve({ status: -1, req }));
    });
  const settle = () => new Promise((r) => setTimeout(r, 300));

  it('20 streams asked at once from one address: 5 opened, 15 answered 429', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => open('1.old')));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(5).fill(200), ...Array(15).fill(429)]);
    for (const a of answers) a.req.destroy();
    await settle();
  });

  it('60 clients that leave during the replay read give their slots back: 5 streams open afterwards', async () => {
    const before = replayReads;
    for (let i = 0; i < 60; i++)
      await new Promise<void>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => {
          s.write('GET /s HTTP/1.1\r\nHost: x\r\nLast-Event-ID: 1.old\r\n\r\n');
          setTimeout(() => {
            s.destroy();
            resolve();
          }, 20);
        });
      });
    expect(replayReads - before).toBeGreaterThan(0); // they did reach the read
    await settle();
    const fresh = await Promise.all(Array.from({ length: 5 }, () => open()));
    expect(fresh.map((f) => f.status)).toEqual([200, 200, 200, 200, 200]);
    for (const f of fresh) f.req.destroy();
    await settle();
  });
});
