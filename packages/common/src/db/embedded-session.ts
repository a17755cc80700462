import { Duplex } from 'node:stream';
import type { PGlite } from '@electric-sql/pglite';

// Untyped packets a client sends before its startup message (PostgreSQL protocol, "Message Formats")
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const PROTOCOL_3 = 196608;
/** Postgres's own bound on a startup packet (MAX_STARTUP_PACKET_LENGTH). */
const MAX_STARTUP_PACKET = 10_000;
const TERMINATE = 0x58; // 'X'

/** How many connections may wait for the one being served (a pool reconnecting while its old connection ends). */
const MAX_WAITING = 16;

/** A FATAL ErrorResponse for a connection the session does not take: its SQLSTATE and message. */
function refusal(code: string, message: string): Buffer {
  const fields = ['SFATAL', 'VFATAL', `C${code}`, `M${message}`];
  const body = Buffer.concat([...fields.map((f) => Buffer.from(`${f}\0`)), Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/**
 * The embedded Postgres's wire, in the process: `pg` clients connect to PGlite through a `LocalWire` (node-postgres's
 * `stream` option) instead of a loopback socket. It replaces @electric-sql/pglite-socket's TCP server, which ran
 * each protocol message on its own (a query's Bind, Execute and Sync: three calls into PGlite, three
 * ReadyForQuery checks and flushes, three socket writes, each after a `setImmediate`), and whose loopback socket
 * cost a system call on each side for every message. Here the messages a client wrote in one turn run in one call
 * into PGlite, and what Postgres answered is handed back as one chunk: one exchange per query, no system call.
 *
 * PGlite is one session, so one connection is served at a time. A connection that comes while another is served
 * waits (what it sends is kept) until that one ends; a client that leaves inside a transaction has it rolled back
 * first, as a Postgres backend does when its client goes. Past MAX_WAITING waiting, a connection is answered
 * SQLSTATE 53300 (too many connections) and closed; once stopped, 57P01 (admin shutdown).
 */
export class EmbeddedSessions {
  private current?: Connection;
  private readonly waiting: Connection[] = [];
  private stopped = false;
  /**
   * Keeps the event loop alive while a connection is open or waiting, as the socket of one did: a client
   * awaiting an answer (or its turn) is work under way, and the process must not end beneath it.
   */
  private keepAlive?: NodeJS.Timeout;

  constructor(private readonly db: PGlite) {}

  /** A new client's end of the wire, for node-postgres's `stream` option (it calls `connect` on it). */
  readonly connect = (): Duplex => new LocalWire(this);

  /** Called by a wire's `connect`: its connection, served now or after the ones before it. */
  attach(wire: LocalWire): Connection | Buffer {
    if (this.stopped) return refusal('57P01', 'the embedded database has stopped');
    if (this.waiting.length >= MAX_WAITING)
      return refusal('53300', `the embedded database serves one connection at a time, and ${MAX_WAITING} are waiting`);
    const connection = new Connection(this.db, wire, () => this.ended(connection));
    this.keepAlive ??= setInterval(() => undefined, 2 ** 31 - 1);
    if (this.current) this.waiting.push(connection);
    else this.serve(connection);
    return connection;
  }

  /** Ends every connection (rolling back a transaction left open); no new one is taken. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const waiting of this.waiting.splice(0)) void waiting.close();
    await this.current?.close();
  }

  private serve(connection: Connection): void {
    this.current = connection;
    connection.serve();
  }

  /** A connection ended (its transaction rolled back): the next waiting one is served. */
  private ended(connection: Connection): void {
    const i = this.waiting.indexOf(connection);
    if (i !== -1) this.waiting.splice(i, 1);
    if (this.current !== connection) return;
    this.current = undefined;
    const next = this.waiting.shift();
    if (next && !this.stopped) this.serve(next);
    if (!this.current && this.waiting.length === 0) {
      clearInterval(this.keepAlive);
      this.keepAlive = undefined;
    }
  }
}

/**
 * The client's side of an in-process connection: a Duplex with the few socket methods node-postgres calls
 * (`connect`, `setNoDelay`, `setKeepAlive`, `ref`, `unref`). What the client writes goes to its connection; what
 * Postgres answers is pushed to be read.
 */
export class LocalWire extends Duplex {
  private connection?: Connection;

  constructor(private readonly sessions: EmbeddedSessions) {
    super();
  }

  connect(): this {
    process.nextTick(() => {
      if (this.destroyed) return;
      const attached = this.sessions.attach(this);
      // the client writes its startup message as soon as it hears 'connect': the connection must be there
      if (attached instanceof Connection) this.connection = attached;
      this.emit('connect');
      if (!(attached instanceof Connection)) {
        this.push(attached);
        this.push(null);
      }
    });
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
    // answers are pushed as Postgres gives them
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.connection?.receive(chunk);
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    void this.connection?.close();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    void this.connection?.close();
    callback(error);
  }

  /** The session's side: an answer to read, or the end of the connection. */
  answer(bytes: Buffer | null): void {
    if (this.destroyed) return;
    this.push(bytes);
  }
}

/** One client: its unread bytes, and whether its startup message was run. */
class Connection {
  private pending: Buffer = Buffer.alloc(0);
  private started = false;
  private served = false;
  private scheduled = false;
  private running = false;
  private closing = false;
  private closed?: Promise<void>;

  constructor(
    private readonly db: PGlite,
    private readonly wire: LocalWire,
    private readonly onClosed: () => void,
  ) {}

  /**
   * Bytes the client wrote: run on the next tick, once the turn's writes are all in (a query's messages come in
   * several writes). (Run at the next check phase instead, the group commits of WriteBatcher would gather the
   * requests of one more poll; measured and not kept: bench/README.md, "The embedded database's wire".)
   */
  receive(chunk: Buffer): void {
    if (this.closing) return;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    this.schedule();
  }

  /** Its turn: what it sent while it waited is run. */
  serve(): void {
    this.served = true;
    this.schedule();
  }

  private schedule(): void {
    if (!this.served || this.running || this.scheduled) return;
    this.scheduled = true;
    process.nextTick(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  /** Runs every complete message received, in order, while more keeps coming. */
  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (!this.closing) {
        const batch = this.started ? this.typedMessages() : this.untypedPacket();
        if (batch === undefined) break;
        if (batch === 'end') {
          await this.close();
          break;
        }
        if (batch.length) this.wire.answer(await this.run(batch));
      }
    } catch {
      // PGlite refused to run it (closing, or broken): the client sees its connection end
      void this.close();
    } finally {
      this.running = false;
    }
  }

  /** Before startup: an SSL or GSS encryption request (declined) or the startup message; anything else ends it. */
  private untypedPacket(): Buffer | 'end' | undefined {
    if (this.pending.length < 8) return undefined;
    const length = this.pending.readInt32BE(0);
    if (length < 8 || length > MAX_STARTUP_PACKET) return 'end';
    if (this.pending.length < length) return undefined;
    const code = this.pending.readInt32BE(4);
    const packet = this.pending.subarray(0, length);
    this.pending = this.pending.subarray(length);
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
      this.wire.answer(Buffer.from('N'));
      return Buffer.alloc(0);
    }
    // a cancel request, or a protocol other than 3.0
    if (code !== PROTOCOL_3) return 'end';
    this.started = true;
    return packet;
  }

  /**
   * After startup: every complete message received, as one batch, up to a Terminate (which ends the connection
   * once the messages before it have run).
   */
  private typedMessages(): Buffer | 'end' | undefined {
    const buf = this.pending;
    let end = 0;
    while (buf.length - end >= 5) {
      if (buf[end] === TERMINATE) {
        if (end > 0) break;
        return 'end';
      }
      const length = buf.readInt32BE(end + 1);
      if (length < 4) return 'end';
      if (buf.length - end < 1 + length) break;
      end += 1 + length;
    }
    if (end === 0) return undefined;
    this.pending = buf.subarray(end);
    return buf.subarray(0, end);
  }

  /** Runs messages in PGlite, its other users kept out; what Postgres answered, in one buffer. */
  private async run(messages: Buffer): Promise<Buffer> {
    const out: Buffer[] = [];
    // PGlite hands out views of its memory, which its next call reuses: each is copied
    const onRawData = (data: Uint8Array) => void out.push(Buffer.from(data));
    // syncToFs: PGlite's file systems here (NodeFS on DATA_DIR, or memory) write through and have nothing to sync
    await this.db.runExclusive(() => this.db.execProtocolRawStream(messages, { onRawData, syncToFs: false }));
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  /** Ends the connection once: a transaction it left open is rolled back before the next connection is served. */
  close(): Promise<void> {
    if (this.closing) return this.closed ?? Promise.resolve();
    this.closing = true;
    this.closed = (async () => {
      this.wire.answer(null);
      this.wire.destroy();
      try {
        // a waiting connection never ran anything: the transaction, if any, is the served one's
        if (this.served && !this.db.closed && this.db.isInTransaction()) await this.db.exec('ROLLBACK');
      } catch {
        // the database is closing: nothing is kept of an open transaction
      }
      this.onClosed();
    })();
    return this.closed;
  }
}
