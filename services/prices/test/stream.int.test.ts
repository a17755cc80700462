import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { eventually, replicaPair, type Replicas } from '@attest/testing';
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
      // the id is `<version>.<ETag>`: the stored prices' write sequence, then the answer's ETag
      expect(first).toEqual({ event: 'price', id: expect.stringMatching(/^\d+\./), data: latest.text });
      expect(first.id!.slice(first.id!.indexOf('.') + 1)).toBe(latest.headers.etag.slice(1, -1));
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

  const amount = (e: Block) => JSON.parse(e.data!).result.prices.WLD.USD.amount as string;
  const version = (e: Block) => Number(e.id!.slice(0, e.id!.indexOf('.')));
  const setWld = (h: PricesHarness, value: string) =>
    h.admin('post', '/prices').send({ token: 'WLD', fiat: 'USD', amount: value }).expect(201);
  /** Until replica `h` serves WLD/USD at `micros` (its snapshot has the writes of the other replica). */
  const served = (h: PricesHarness, micros: string) =>
    eventually(async () => {
      const res = await request(h.publicApp).get('/public/v1/prices/latest/wld').query({ fiatCurrencies: 'USD' });
      expect(res.body.result.prices.WLD.USD.amount).toBe(micros);
    });

  it('a reconnect on another replica is first sent exactly the changes it missed, in order, then live ones', async () => {
    const s1 = await openStream(`${servers[1].url}${path}`);
    const seen = await s1.nextEvent();
    s1.close();
    // three changes while the client is away, written on replica a
    for (const value of ['1.70', '1.71', '1.72']) await setWld(a, value);
    await served(b, '1720000');
    const s2 = await openStream(`${servers[0].url}${path}`, { 'last-event-id': seen.id! });
    try {
      const missed = [await s2.nextEvent(), await s2.nextEvent(), await s2.nextEvent()];
      expect(missed.map((e) => [e.event, amount(e)])).toEqual([
        ['price', '1700000'],
        ['price', '1710000'],
        ['price', '1720000'],
      ]);
      // the ids order the events on either replica: each after the one the client had
      const versions = [seen, ...missed].map(version);
      expect([...versions].sort((x, y) => x - y)).toEqual(versions);
      expect(new Set(versions).size).toBe(4);
      // the last one missed is the current answer: no repeat of it; the next change is the next event
      await setWld(b, '1.73');
      const live = await s2.nextEvent();
      expect(amount(live)).toBe('1730000');
      expect(version(live)).toBeGreaterThan(version(missed[2]));
    } finally {
      s2.close();
    }
    // the same id on replica b, where the client first was: the same three events
    await served(b, '1730000');
    const s3 = await openStream(`${servers[1].url}${path}`, { 'last-event-id': seen.id! });
    try {
      const again = [await s3.nextEvent(), await s3.nextEvent(), await s3.nextEvent(), await s3.nextEvent()];
      expect(again.map(amount)).toEqual(['1700000', '1710000', '1720000', '1730000']);
    } finally {
      s3.close();
    }
  });

  it('an id older than the replay bound (5 minutes of writes) gets the current answer only', async () => {
    const s1 = await openStream(`${servers[0].url}${path}`);
    const seen = await s1.nextEvent();
    s1.close();
    await setWld(a, '1.74');
    await setWld(a, '1.75');
    // the two writes are made to look 10 minutes old: past the bound of the replay
    await a.storage.db.query("UPDATE quotes SET recorded_at = recorded_at - interval '10 minutes' WHERE id > $1", [
      version(seen),
    ]);
    const s2 = await openStream(`${servers[0].url}${path}`, { 'last-event-id': seen.id! });
    try {
      const first = await s2.nextEvent();
      expect(amount(first)).toBe('1750000');
      await setWld(a, '1.76');
      expect(amount(await s2.nextEvent())).toBe('1760000'); // nothing between: 1.74 was not replayed
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
