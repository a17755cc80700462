import Redis from 'ioredis';
import { errors } from '../errors';
import type { Logger } from '../logger';
import type { Cache } from './cache';

const INCR_WITH_TTL = `local v = redis.call('INCR', KEYS[1]) if v == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return v`;

/** Redis-backed cache. Commands fail fast while Redis is down (no offline queue), so requests get a 503, not a hang. */
export class RedisCache implements Cache {
  readonly mode = 'redis' as const;
  private readonly client: Redis;
  private readonly waiters = new Set<() => void>();

  constructor(url: string, prefix: string, logger: Logger) {
    this.client = new Redis(url, {
      keyPrefix: prefix,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 3000,
      commandTimeout: 3000,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    let down = false;
    this.client.on('error', (err: Error) => {
      if (!down) logger.warn('cache connection lost', { error: err.message });
      down = true;
    });
    this.client.on('ready', () => {
      if (down) logger.info('cache connection restored');
      down = false;
      const waiting = [...this.waiters];
      this.waiters.clear();
      for (const wake of waiting) wake();
    });
  }

  /** The ioredis client (with this cache's key prefix), for modules that need Redis itself: the rate limiter. */
  get redis(): Redis {
    return this.client;
  }

  /**
   * Waits a bounded time for a (re)connection, so a down Redis answers 503 quickly rather than hanging.
   * Waiters share the one 'ready' listener set in the constructor: a listener per waiting request would
   * pile up during an outage (MaxListenersExceededWarning) and cost every request an add and a remove.
   */
  whenReady(): Promise<void> {
    if (this.client.status === 'ready') return Promise.resolve();
    if (this.client.status === 'end') return Promise.reject(new Error('cache client closed'));
    return new Promise((resolve, reject) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error('cache not connected'));
      }, 1000);
      timer.unref();
      this.waiters.add(waiter);
    });
  }

  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      await this.whenReady();
      return await fn();
    } catch (err) {
      throw errors.unavailable('cache', err);
    }
  }

  get(key: string) {
    return this.run(() => this.client.get(key));
  }

  async set(key: string, value: string, ttlMs?: number) {
    await this.run(() =>
      ttlMs === undefined
        ? this.client.set(key, value)
        : this.client.set(key, value, 'PX', Math.max(1, Math.ceil(ttlMs))),
    );
  }

  async setIfAbsent(key: string, value: string, ttlMs: number) {
    const result = await this.run(() => this.client.set(key, value, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'));
    return result === 'OK';
  }

  async del(...keys: string[]) {
    if (keys.length) await this.run(() => this.client.del(...keys));
  }

  take(key: string) {
    return this.run(() => this.client.getdel(key));
  }

  async incr(key: string, ttlMs: number) {
    const value = await this.run(() => this.client.eval(INCR_WITH_TTL, 1, key, Math.max(1, Math.ceil(ttlMs))));
    return Number(value);
  }

  async ping() {
    await this.run(() => this.client.ping());
  }

  async close() {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
