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
  /**
   * Called once every topic is subscribed on a new connection to Redis (the first one too): messages
   * may have been missed before it, so drop what was cached.
   */
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
  /** Counts the subscriber's connections: an answer that comes for an earlier one is no news. */
  private connection = 0;
  /** SUBSCRIBEs sent on this connection and not answered yet: until they are, messages may be missed. */
  private unanswered = 0;
  /** The last connection on which every channel was subscribed (0: none yet). */
  private subscribedOn = 0;
  private closed = false;

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
      this.connection++;
      this.unanswered = 0;
      if (this.channels.size) this.listen([...this.channels]);
      else this.subscribed();
    });
    this.subscriber.on('message', (channel: string, raw: string) => this.receive(channel, raw));
  }

  /** Ready, and Redis has answered every SUBSCRIBE of this connection: from here on nothing is missed. */
  get connected(): boolean {
    return this.subscriber.status === 'ready' && this.unanswered === 0 && this.subscribedOn === this.connection;
  }

  /**
   * Every channel is subscribed on this connection: the resync handlers run now, not at 'ready'. What
   * was published before (while the bus was away, or its SUBSCRIBEs on the way) was missed, and what was
   * read before may already be stale: after a reconnection, and at the first connection too (a service
   * loads its state at start-up, perhaps while Redis is still unreachable).
   */
  private subscribed(): void {
    if (this.subscribedOn === this.connection) return;
    if (this.subscribedOn > 0) this.logger.info('invalidation bus reconnected; dropping in-process caches');
    this.subscribedOn = this.connection;
    for (const handler of this.resync) handler();
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

  /**
   * Subscribes on the current connection. A failure is logged and, the connection still up, tried again
   * a second later (the bus stays not connected meanwhile); a new connection subscribes every channel.
   */
  private listen(channels: string[]): void {
    const connection = this.connection;
    this.unanswered++;
    this.subscriber.subscribe(...channels).then(
      () => {
        if (connection !== this.connection) return;
        if (--this.unanswered === 0) this.subscribed();
      },
      (err: Error) => {
        if (this.closed) return;
        this.logger.warn('invalidation bus subscribe failed', { channels: channels.length, error: err.message });
        // a connection that went away is not tried again: its next 'ready' subscribes every channel
        const current = () => connection === this.connection && this.subscriber.status === 'ready' && !this.closed;
        if (!current()) return;
        setTimeout(() => {
          if (!current()) return;
          this.unanswered--;
          this.listen(channels);
        }, 1000).unref();
      },
    );
  }

  onResync(handler: () => void): () => void {
    this.resync.add(handler);
    return () => this.resync.delete(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.local.close();
    await Promise.all(
      [this.publisher, this.subscriber].map((client) => client.quit().catch(() => client.disconnect())),
    );
  }
}

export function createBus(url: string | undefined, prefix: string, logger: Logger): InvalidationBus {
  return url ? new RedisBus(url, prefix, logger) : new MemoryBus();
}
