import type { Request, Response } from 'express';
import { AppError, clientAddress, isAppError, type InvalidationBus, type Logger } from '@attest/common';
import { PRICE_SNAPSHOT_CACHE, type PriceHistory, type PriceService, type PriceStore } from '../prices';
import { eventId, missedEvents, parseEventId, toEvent, type StreamEvent, type StreamQuery } from './replay';

export interface PriceStreamOptions {
  /** PRICE_STREAM_MAX_CONNECTIONS: open streams on this replica. */
  maxConnections: number;
  /** PRICE_STREAM_MAX_PER_ADDRESS: open streams of one client address on this replica. */
  maxPerAddress: number;
  /** A comment line this often keeps proxies from closing an idle stream (and re-judges freshness). */
  heartbeatMs: number;
  history: Pick<PriceHistory, 'changes'>;
  /** The stored writes a reconnected stream missed are read here (the same for every replica). */
  store: Pick<PriceStore, 'writesSince' | 'latestAsOf'>;
  bus: InvalidationBus;
  logger: Logger;
}

interface Subscriber {
  res: Response;
  address: string;
}

/** The subscribers of one query, and the tag of the last event sent to them. */
interface Channel extends StreamQuery {
  subscribers: Set<Subscriber>;
  lastTag: string | null;
}

const frame = (e: StreamEvent) =>
  Buffer.concat([
    Buffer.from(`event: ${e.event}\nid: ${eventId(e)}\ndata: `),
    Buffer.from(e.data),
    Buffer.from('\n\n'),
  ]);

/**
 * GET /public/v1/prices/stream: Server-Sent Events of the price answer. Subscribers of the same query share
 * a channel; when the snapshot is reloaded (a write here, or on another replica through the invalidation
 * bus) each channel's answer is computed once and, when its ETag changed, the same bytes are written to
 * every subscriber. The event id is `<version>.<ETag>`, the version the stored prices' write sequence
 * (the same on every replica): a client that reconnects with Last-Event-ID is first sent the answers written
 * since its id (bounded, see missedEvents), then the current one unless it already has it. Connections are
 * bounded per address and in total on each replica.
 */
export class PriceStream {
  private readonly channels = new Map<string, Channel>();
  private readonly perAddress = new Map<string, number>();
  private connections = 0;
  private heartbeat?: NodeJS.Timeout;
  private pending?: NodeJS.Timeout;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly prices: Pick<PriceService, 'answer' | 'answerWithChange' | 'answerFrom' | 'version'>,
    private readonly options: PriceStreamOptions,
  ) {
    this.unsubscribe = options.bus.subscribe(`cache:${PRICE_SNAPSHOT_CACHE}`, () => this.soon());
    this.heartbeat = setInterval(() => this.beat(), options.heartbeatMs).unref();
  }

  get open(): number {
    return this.connections;
  }

  /** A refresh shortly after a burst of bus messages (a feed's batch is one reload). */
  private soon(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      void this.refreshAll();
    }, 10);
  }

  /** The current answer as an event; its version is read first, so the answer is at least that recent. */
  private async event(c: StreamQuery): Promise<{ tag: string; bytes: Buffer }> {
    const version = await this.prices.version();
    let e: StreamEvent;
    try {
      const answer = c.change
        ? await this.prices.answerWithChange(c.tokens, c.fiats, (list) => this.options.history.changes(list))
        : await this.prices.answer(c.tokens, c.fiats);
      e = toEvent(version, { answer });
    } catch (err) {
      if (!isAppError(err)) throw err;
      e = toEvent(version, { error: err });
    }
    return { tag: e.tag, bytes: frame(e) };
  }

  /**
   * What a client reconnected with `lastEventId` missed before the current answer: the events written
   * since its version, up to the current snapshot's, and the tag it then has; no events and no tag (so the current answer
   * is sent) when the id is too old or unknown.
   */
  private async missed(
    query: StreamQuery,
    lastEventId: string | undefined,
  ): Promise<{ frames: Buffer[]; tag: string | null }> {
    const seen = parseEventId(lastEventId);
    if (!seen) return { frames: [], tag: null };
    const upTo = await this.prices.version();
    if (seen.version === null || seen.version >= upTo) return { frames: [], tag: seen.tag };
    const { store, history, logger } = this.options;
    try {
      const deps = { store, history, prices: this.prices, now: Date.now };
      const events = await missedEvents(deps, query, seen.version, seen.tag, upTo);
      if (!events) return { frames: [], tag: null };
      return { frames: events.map(frame), tag: events.length ? events[events.length - 1].tag : seen.tag };
    } catch (err) {
      // the store cannot be read: the current answer (from the snapshot in memory) is sent, as for an old id
      logger.warn('price stream replay failed', { error: (err as Error).message });
      return { frames: [], tag: null };
    }
  }

  /** Recomputes every channel once and sends what changed. */
  async refreshAll(): Promise<void> {
    for (const c of this.channels.values()) {
      try {
        const { tag, bytes } = await this.event(c);
        if (tag === c.lastTag) continue;
        c.lastTag = tag;
        for (const s of c.subscribers) s.res.write(bytes);
      } catch (err) {
        this.options.logger.warn('price stream refresh failed', { error: (err as Error).message });
      }
    }
  }

  private beat(): void {
    if (this.connections === 0) return;
    const line = Buffer.from(': heartbeat\n\n');
    for (const c of this.channels.values()) for (const s of c.subscribers) s.res.write(line);
    void this.refreshAll(); // a price that turned stale with no write is announced too
  }

  async subscribe(req: Request, res: Response, query: { tokens: string[]; fiats: string[]; change: boolean }) {
    const address = clientAddress(req);
    if ((this.perAddress.get(address) ?? 0) >= this.options.maxPerAddress)
      throw new AppError(
        'too_many_requests',
        429,
        `At most ${this.options.maxPerAddress} price streams may be open from one address; close one or poll.`,
        null,
        { headers: { 'Retry-After': '30' } },
      );
    if (this.connections >= this.options.maxConnections)
      throw new AppError(
        'service_unavailable',
        503,
        'Too many price streams are open; poll or try again later.',
        null,
        {
          headers: { 'Retry-After': '30' },
        },
      );
    // the slot is taken, and given back on close, before anything is awaited: a client gone during a read
    // neither keeps its slot nor gets past the limits by arriving many at once
    this.connections++;
    this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    const key = `${query.tokens.join(',')}|${query.fiats.join(',')}|${query.change ? 1 : 0}`;
    const subscriber = { res, address };
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const channel = this.channels.get(key);
      if (channel?.subscribers.delete(subscriber) && channel.subscribers.size === 0) this.channels.delete(key);
      this.connections--;
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
    };
    res.on('close', release);
    let missed: Awaited<ReturnType<PriceStream['missed']>>;
    let current: { tag: string; bytes: Buffer };
    try {
      missed = await this.missed(query, req.get('last-event-id'));
      current = await this.event(query);
    } catch (err) {
      release();
      throw err;
    }
    if (released || res.destroyed) return release();
    let c = this.channels.get(key); // looked up after the reads: another subscriber may have opened or left it
    if (!c) this.channels.set(key, (c = { ...query, subscribers: new Set(), lastTag: current.tag }));
    c.lastTag = current.tag;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 3000\n\n');
    for (const bytes of missed.frames) res.write(bytes);
    if (missed.tag !== current.tag) res.write(current.bytes);
    c.subscribers.add(subscriber);
    req.socket.setTimeout(0);
  }

  /** Ends every stream (shutdown): clients reconnect to another replica with their Last-Event-ID. */
  close(): void {
    this.unsubscribe();
    clearInterval(this.heartbeat);
    clearTimeout(this.pending);
    for (const c of this.channels.values()) for (const s of c.subscribers) s.res.end();
  }
}
