import { Duplex } from 'node:stream';
import type { PGlite } from '@electric-sql/pglite';

/** A frontend message's first byte: the startup packet (its length's high byte) and Terminate ('X'). */
const STARTUP = 0;
const TERMINATE = 0x58;
/** Protocol version 3.0, the second word of a startup packet. */
const PROTOCOL_3 = 196608;

/**
 * One `pg` connection to a PGlite of this process, without a socket: the stream a `pg` Client is given
 * (its `stream` option), which hands the Postgres wire protocol's bytes to PGlite and PGlite's answer back.
 * `pg` still writes and parses every message (the same types, errors and prepared statements as through a
 * socket); what goes is the loopback TCP connection and the socket server between them, which ran each
 * message of a statement (Bind, Execute, Sync…) as a call into PGlite of its own. Here the messages `pg`
 * writes in one turn of the event loop (one statement's, or a pipeline's) go into PGlite in one call, after
 * that turn's I/O.
 *
 * Measured (`pnpm exec tsx packages/common/test/embedded-statements.ts`: 4,000 prepared one-row UPDATEs by key through a `pg`
 * Client, CPU time, Liftoff only, rounds after the first): ~0.13–0.15 ms a statement through
 * @electric-sql/pglite-socket, ~0.05 ms here (bench/README.md, "The refresh row's storage").
 *
 * PGlite is one Postgres session, and a call runs alone (PGlite's runExclusive), in the order written.
 */
export class PGliteConnection extends Duplex {
  /** Bytes of a message not complete yet. */
  private partial: Buffer = Buffer.alloc(0);
  /** Complete messages of this turn, not yet given to PGlite. */
  private pending: Buffer[] = [];
  private flushScheduled = false;
  /** The calls into PGlite, one after another. */
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly db: PGlite) {
    super();
  }

  // the socket's methods that pg calls
  connect(): this {
    queueMicrotask(() => this.emit('connect'));
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }

  override _read(): void {
    // answers are pushed as PGlite gives them
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const bytes = this.partial.length ? Buffer.concat([this.partial, chunk]) : chunk;
    let offset = 0;
    while (bytes.length - offset >= (bytes[offset] === STARTUP ? 8 : 5)) {
      const length = messageLength(bytes, offset);
      if (bytes.length - offset < length) break;
      const message = bytes.subarray(offset, offset + length);
      offset += length;
      // the startup packet and Terminate are handled by PGlite only as the first message of a call
      if (message[0] === STARTUP || message[0] === TERMINATE) {
        this.flush();
        this.run(message);
      } else {
        this.pending.push(message);
        if (!this.flushScheduled) {
          this.flushScheduled = true;
          // after the I/O of this turn of the event loop, as a socket's answer would come: the requests that came
          // in it meanwhile queue behind the statement, and batchers (KeyBatcher, WriteBatcher) can take them together
          setImmediate(() => this.flush());
        }
      }
    }
    this.partial = offset < bytes.length ? Buffer.from(bytes.subarray(offset)) : Buffer.alloc(0);
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.flush();
    // the readable side ends once what was written has been answered
    void this.running.then(() => {
      this.push(null);
      callback();
    });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.pending = [];
    callback(error);
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const messages = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
    this.pending = [];
    this.run(messages);
  }

  private run(messages: Buffer): void {
    this.running = this.running.then(async () => {
      if (this.destroyed) return;
      try {
        // streamed as PGlite writes it (copied out of its memory), not parsed by PGlite as its own query's answer
        const answer: Buffer[] = [];
        await this.db.runExclusive(() =>
          this.db.execProtocolRawStream(new Uint8Array(messages), {
            onRawData: (data) => answer.push(Buffer.from(data)),
          }),
        );
        if (answer.length > 0 && !this.destroyed) this.push(answer.length === 1 ? answer[0] : Buffer.concat(answer));
      } catch (err) {
        // PGlite itself failed (not a statement: those are answered as ErrorResponse messages)
        this.destroy(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }
}

/** The length of the message at `offset` (at least 8 bytes of it there), with its type byte (none for the startup packet). */
function messageLength(bytes: Buffer, offset: number): number {
  if (bytes[offset] === STARTUP && bytes.readInt32BE(offset + 4) === PROTOCOL_3) return bytes.readInt32BE(offset);
  return 1 + bytes.readInt32BE(offset + 1);
}
