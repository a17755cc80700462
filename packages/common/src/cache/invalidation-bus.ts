import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import Redis from 'ioredis';
import type { Logger } from '../logger';

export type BusHandler = (message: string) => void;

/**
 * Messages that keep in-process caches honest: "this key changed", "this token is revoked".
 * A publish reaches this process's subscribers at once and, with Redis, every replica's.
 * publish never throws: it runs after a commit, and a lost message is bounded by the caches'
 * own rules (see LocalCache: entries older than 1 s are not trusted while the bus is down).
 */
export interface InvalidationBus {
  readonly mode: 'redis' | 'memory';
  /** True while messages from other replicas are known to arrive. Always true in memory mode. */
  readonly connected: boolean;
  publish(topic: string, message: string): Promise<void>;
  subscribe(topic: string, handler: BusHandler): () => void;
  /** Called after a reconnection: messages may have been missed, so drop what was cached. */
  onResync(handler: () => void): () => void;
  close(): Promise<void>;
}

/** One process: delivery is a local event. */
export class MemoryBus implements InvalidationBus {
  readonly mode = 'memory' as const;
  readonly connected = true;
  private readonly events = new EventEmitter().setMaxListeners(0);

  async publish(topic: string, message: string): Promise<void> {
    this.events.emit(topic, message);
  }

  subscribe(topic: string, handler: BusHandler): () => void {
    this.events.on(topic, handler);
    return () => this.events.off(topic, handler);
  }

  onResync(): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    this.events.removeAllListeners();
  }
}

const SEPARATOR = '|';

/** Redis pub/sub, one channel per topic under the service's prefix; local delivery does not wait for Redis. */
export class RedisBus implements InvalidationBus {
  readonly mode = 'redis' as const;
  private readonly local = new MemoryBus();
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly resync = new Set<() => void>();
  private readonly origin = randomBytes(8).toString('hex');
  private readonly channels = new Set<string>();
  private everReady = false;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {
    const options = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 3000,
      commandTimeout: 3000,
      retryStrategy: (times: number) => Math.min(times * 200, 2000),
    };
    this.publisher = new Redis(url, options);
    // ioredis's autoResubscribe sends its SUBSCRIBE with nobody listening for the answer: closed or cut
    // before Redis answers, it rejects unhandled. The bus subscribes itself, on every 'ready', to every
    // channel; nothing waits in ioredis's offline queue (which it empties while Redis stays down).
    this.subscriber = new Redis(url, { ...options, autoResubscribe: false });
    this.publisher.on('error', () => undefined);
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('ready', () => {
      if (this.channels.size) this.listen([...this.channels]);
      if (this.everReady) {
        this.logger.info('invalidation bus reconnected; dropping in-process caches');
        for (const handler of this.resync) handler();
      }
      this.everReady = true;
    });
    this.subscriber.on('message', (channel: string, raw: string) => this.receive(channel, raw));
  }

  get connected(): boolean {
    return this.subscriber.status === 'ready';
  }

  private channel(topic: string): string {
    return `${this.prefix}bus:${topic}`;
  }

  private receive(channel: string, raw: string): void {
    if (!channel.startsWith(`${this.prefix}bus:`)) return;
    const at = raw.indexOf(SEPARATOR);
    if (at < 0 || raw.slice(0, at) === this.origin) return;
    void this.local.publish(channel.slice(this.prefix.length + 4), raw.slice(at + 1));
  }

  async publish(topic: string, message: string): Promise<void> {
    await this.local.publish(topic, message);
    try {
      await this.publisher.publish(this.channel(topic), `${this.origin}${SEPARATOR}${message}`);
    } catch (err) {
      this.logger.warn('invalidation not published to other replicas', { topic, error: (err as Error).message });
    }
  }

  subscribe(topic: string, handler: BusHandler): () => void {
    const channel = this.channel(topic);
    if (!this.channels.has(channel)) {
      this.channels.add(channel);
      // not connected yet: the next 'ready' subscribes it with the others
      if (this.subscriber.status === 'ready') this.listen([channel]);
    }
    return this.local.subscribe(topic, handler);
  }

  /** Subscribes; a failure is logged, and the channels are subscribed again at the next 'ready'. */
  private listen(channels: string[]): void {
    this.subscriber.subscribe(...channels).catch((err: Error) => {
      this.logger.warn('invalidation bus subscribe failed', { channels: channels.length, error: err.message });
    });
  }

  onResync(handler: () => void): () => void {
    this.resync.add(handler);
    return () => this.resync.delete(handler);
  }

  async close(): Promise<void> {
    await this.local.close();
    await Promise.all(
      [this.publisher, this.subscriber].map((client) => client.quit().catch(() => client.disconnect())),
    );
  }
}

export function createBus(url: string | undefined, prefix: string, logger: Logger): InvalidationBus {
  return url ? new RedisBus(url, prefix, logger) : new MemoryBus();
}
