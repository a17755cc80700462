import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: Record<string, string>;
  body: string;
}

export interface ReceiverAnswer {
  status: number;
  /** Never answer (the connection stays open until the receiver stops). */
  hang?: boolean;
  headers?: Record<string, string>;
  /** The answer's body (none: empty). */
  body?: string | Buffer;
}

/**
 * A webhook receiver on loopback that records every request and answers from a queue of planned
 * answers (200 once the queue is empty).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly answers: ReceiverAnswer[] = [];
  /** The answer when none is queued; 200 unless a test says otherwise. */
  respond: (r: Received) => ReceiverAnswer = () => ({ status: 200 });
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.received.push({
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const answer = this.answers.shift() ?? this.respond(this.received[this.received.length - 1]);
      if (!answer.hang) res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  answer(...answers: ReceiverAnswer[]): void {
    this.answers.push(...answers);
  }

  /** Polls until `count` requests have arrived matching `filter`. */
  async waitFor(count: number, filter: (r: Received) => boolean = () => true, timeoutMs = 20000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const matching = this.received.filter(filter);
      if (matching.length >= count) return matching;
      if (Date.now() > deadline) throw new Error(`waited for ${count} webhook requests, got ${matching.length}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export const eventOf = (r: Received) =>
  JSON.parse(r.body) as {
    version: string;
    type: string;
    timestamp: string;
    test?: boolean;
    data: Record<string, string | number | null>;
  };

/** Polls `check` until it returns a value (not undefined). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
