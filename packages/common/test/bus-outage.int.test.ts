import type Redis from 'ioredis';
import { RedisBus } from '../src/cache';
import { testLogger } from './support';
import { describeNeeding } from './support/binaries';
import { CuttableProxy, freePort, ThrowawayRedis } from './support/throwaway';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nextTurn = () => new Promise((r) => setImmediate(r));

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (condition()) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** Like until, but looks every turn of the event loop: for what holds for one turn only. */
async function untilTurn(condition: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 10000; !condition(); await nextTurn())
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
}

/** Sends a message from `from` until `seen` holds it: a (re)subscription settles in its own time. */
async function deliver(from: RedisBus, topic: string, message: string, seen: string[]): Promise<void> {
  await until(() => {
    if (seen.includes(message)) return true;
    void from.publish(topic, message);
    return false;
  }, `"${message}" arrives`);
}

describeNeeding(
  ['redis-server'],
  'Redis invalidation bus across a reconnection (throwaway redis-server behind a proxy)',
  () => {
    let redis: ThrowawayRedis;
    let proxy: CuttableProxy;
    let sender: RedisBus;
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);

    beforeAll(async () => {
      redis = new ThrowawayRedis(await freePort());
      await redis.start();
      proxy = new CuttableProxy(redis.port);
      await proxy.start();
      sender = new RedisBus(`redis://127.0.0.1:${redis.port}`, 'reconnect:', testLogger);
      process.on('unhandledRejection', record);
    }, 30000);

    afterAll(async () => {
      process.off('unhandledRejection', record);
      await sender?.close();
      await proxy?.stop();
      await redis?.stop();
    });

    beforeEach(() => {
      unhandled.length = 0;
    });

    it('subscribes again after Redis comes back: messages of other replicas arrive as before', async () => {
      const bus = new RedisBus(proxy.url, 'reconnect:', testLogger);
      try {
        const seen: string[] = [];
        let resyncs = 0;
        bus.subscribe('keys', (m) => seen.push(m));
        bus.onResync(() => resyncs++);
        await deliver(sender, 'keys', 'before', seen);

        // one drop of the caches for each connection: the first, and the one after the cut
        await until(() => resyncs === 1, 'the first connection drops what was read before it');

        proxy.cut();
        await until(() => !bus.connected, 'the bus sees the cut');
        proxy.heal();
        await until(() => bus.connected, 'the bus reconnects');
        await deliver(sender, 'keys', 'after', seen);

        expect(seen.filter((m) => m !== 'before' && m !== 'after')).toEqual([]);
        expect(resyncs).toBe(2);
        expect(unhandled).toEqual([]);
      } finally {
        await bus.close();
      }
    }, 30000);

    it('connected again means subscribed again: what another replica publishes from then on, or as the caches are dropped, arrives', async () => {
      const bus = new RedisBus(proxy.url, 'reconnect:', testLogger);
      try {
        const seen: string[] = [];
        bus.subscribe('keys', (m) => seen.push(m));
        await deliver(sender, 'keys', 'before', seen);
        // the moment the bus drops its caches, another replica changes a key: the news must not be lost
        bus.onResync(() => void sender.publish('keys', 'at-resync'));

        proxy.cut();
        await until(() => !bus.connected, 'the bus sees the cut');
        proxy.heal();
        // the first turn the bus says it is connected, a replica publishes, once
        await untilTurn(() => bus.connected, 'the bus reconnects');
        await sender.publish('keys', 'at-once');

        await until(() => seen.includes('at-once') && seen.includes('at-resync'), 'both messages arrive');
        // (deliver may have sent 'before' more than once before it arrived)
        expect(seen.filter((m) => m !== 'before')).toEqual(['at-resync', 'at-once']);
        expect(unhandled).toEqual([]);
      } finally {
        await bus.close();
      }
    }, 30000);

    it('started while Redis is unreachable, it subscribes once Redis answers, however long that takes', async () => {
      proxy.cut();
      const bus = new RedisBus(proxy.url, 'reconnect:', testLogger);
      try {
        const seen: string[] = [];
        bus.subscribe('keys', (m) => seen.push(m));
        await sleep(1500); // several failed connection attempts: ioredis drops the SUBSCRIBE it had queued
        expect(bus.connected).toBe(false);
        proxy.heal();
        await until(() => bus.connected, 'the bus connects');
        await deliver(sender, 'keys', 'late', seen);
        expect(unhandled).toEqual([]);
      } finally {
        proxy.heal();
        await bus.close();
      }
    }, 30000);

    it('closed while it subscribes again after a reconnection, it leaves no unhandled rejection', async () => {
      const bus = new RedisBus(proxy.url, 'reconnect:', testLogger);
      const seen: string[] = [];
      bus.subscribe('keys', (m) => seen.push(m));
      await deliver(sender, 'keys', 'first', seen);

      proxy.cut();
      await until(() => !bus.connected, 'the bus sees the cut');
      proxy.heal();
      // the turn the subscriber is ready again, its SUBSCRIBE is on the wire and not yet answered (the
      // bus is not connected until it is: the test looks at the connection itself)
      const { subscriber } = bus as unknown as { subscriber: Redis };
      await untilTurn(() => subscriber.status === 'ready', 'the subscriber is ready again');
      expect(bus.connected).toBe(false);
      const closing = bus.close();
      proxy.cut();
      await closing;
      proxy.heal();
      for (let i = 0; i < 10; i++) await nextTurn();
      await sleep(100);

      expect(unhandled).toEqual([]);
    }, 30000);
  },
);
