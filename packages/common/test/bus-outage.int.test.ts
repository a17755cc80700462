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

        proxy.cut();
        await until(() => !bus.connected, 'the bus sees the cut');
        proxy.heal();
        await until(() => bus.connected, 'the bus reconnects');
        await deliver(sender, 'keys', 'after', seen);

        expect(seen.filter((m) => m !== 'before' && m !== 'after')).toEqual([]);
        expect(resyncs).toBe(1);
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
      // the turn the subscriber is ready again, its SUBSCRIBE is on the wire and not yet answered
      while (!bus.connected) await nextTurn();
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
