import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { replicaPair, type Replicas } from '@attest/testing';
import { pricesHarness, type PricesHarness } from './support';

interface Block {
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
  retry?: string;
}

/** An SSE client: each call of next() gives the next block (an event, a comment, a retry line). */
async function openStream(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const next = async (): Promise<Block> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block: Block = {};
        for (const line of buffer.slice(0, end).split('\n')) {
          if (line.startsWith(':')) block.comment = line.slice(1).trim();
          else {
            const at = line.indexOf(':');
            (block as Record<string, string>)[line.slice(0, at)] = line.slice(at + 1).trim();
          }
        }
        buffer = buffer.slice(end + 2);
        return block;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('stream closed');
      buffer += decoder.decode(value, { stream: true });
    }
  };
  /** The next event (skipping the retry line and heartbeats). */
  const nextEvent = async (): Promise<Block> => {
    for (;;) {
      const block = await next();
      if (block.event) return block;
    }
  };
  return { res, next, nextEvent, close: () => controller.abort() };
}

const listen = async (h: PricesHarness) => {
  const server: Server = h.publicApp.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};
const stop = (server: Server) => {
  server.closeAllConnections();
  return new Promise((r) => server.close(r));
};

describe('GET /public/v1/prices/stream (Server-Sent Events)', () => {
  let a: PricesHarness;
  let b: PricesHarness;
  let servers: { server: Server; url: string }[];
  let replicas: Replicas<PricesHarness>;
  beforeAll(async () => {
    const env = { PRICE_STREAM_MAX_PER_ADDRESS: '3', PRICE_STREAM_HEARTBEAT_SECONDS: '1' };
    // a second replica: same database and invalidation bus (see replicaPair)
    replicas = await replicaPair('prices', (shared, which) =>
      pricesHarness(which === 'a' ? env : { ...env, PRICE_FEEDS: 'seed' }, shared),
    );
    ({ a, b } = replicas);
    servers = [await listen(a), await listen(b)];
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => stop(s.server)));
    await replicas?.close();
  });

  const path = '/public/v1/prices/stream?fiatCurrencies=USD';

  it('sends the answer at once, then an event when a price changes on another replica; a heartbeat between', async () => {
    const latest = await request(a.publicApp).get('/public/v1/prices/latest/wld').query({ fiatCurrencies: 'USD' });
    const s = await openStream(`${servers[1].url}${path}`, { origin: 'https://shop.example' });
    try {
      expect(s.res.status).toBe(200);
      expect(s.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(s.res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await s.next()).toEqual({ retry: '3000' });
      const first = await s.nextEvent();
      expect(first).toEqual({ event: 'price', id: latest.headers.etag.slice(1, -1), data: latest.text });
      // an operator sets a price on replica a: replica b's stream carries it
      await a.admin('post', '/prices').send({ token: 'WLD', fiat: 'USD', amount: '1.62' }).expect(201);
      const changed = await s.nextEvent();
      expect(JSON.parse(changed.data!).result.prices.WLD.USD.amount).toBe('1620000');
      expect(changed.id).not.toBe(first.id);
      let block = await s.next();
      while (!block.comment) block = await s.next();
      expect(block.comment).toBe('heartbeat');
    } finally {
      s.close();
    }
  });

  it('resumes with Last-Event-ID: no repeat of an answer the client has, the next change arrives', async () => {
    const s1 = await openStream(`${servers[0].url}${path}`);
    const seen = await s1.nextEvent();
    s1.close();
    const s2 = await openStream(`${servers[0].url}${path}`, { 'last-event-id': seen.id! });
    try {
      await a.admin('post', '/prices').send({ token: 'WLD', fiat: 'USD', amount: '1.63' }).expect(201);
      const next = await s2.nextEvent(); // the first event is the change, not a repeat of `seen`
      expect(JSON.parse(next.data!).result.prices.WLD.USD.amount).toBe('1630000');
    } finally {
      s2.close();
    }
  });

  it('bounds the streams of one address (429) and checks the query like the latest endpoint', async () => {
    const open = await Promise.all([0, 1, 2].map(() => openStream(`${servers[0].url}${path}`)));
    try {
      await Promise.all(open.map((s) => s.nextEvent()));
      const refused = await fetch(`${servers[0].url}${path}`);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('30');
      expect(((await refused.json()) as { code: string }).code).toBe('too_many_requests');
    } finally {
      open.forEach((s) => s.close());
    }
    const bad = await request(a.publicApp).get('/public/v1/prices/stream').query({ fiatCurrencies: 'XYZ' });
    expect(bad.status).toBe(400);
    expect(bad.body.attribute).toBe('fiatCurrencies');
  });
});
