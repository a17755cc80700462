import fs from 'node:fs';
import path from 'node:path';
import type { AuditEvent } from './audit-store';

/** A segment is closed, and a new one begun, once it holds this many bytes (by default). */
const SEGMENT_BYTES = 4 * 1024 * 1024;
const SEGMENT_NAME = /^(\d{8})\.log$/;

/** A journal line: an event (`E<seq> <json>`) or the events stored since (`C<seq>,<seq>,…`). */
const eventLine = (seq: number, event: AuditEvent) => `E${seq} ${JSON.stringify(event)}\n`;
const commitLine = (seqs: readonly number[]) => `C${seqs.join(',')}\n`;

/**
 * The audit events of the embedded database, written ahead of it: `AuditLog.record` appends an event here
 * (one `write` to a file, as the embedded Postgres's own commit is: it runs with fsync off) and returns, and
 * the event is inserted into `audit_events` with the next group commit, after the answer. A line marks the
 * events each insert stored. After a crash, `open` finds the events no line marks and writes them again
 * (they go into the table with the first group commit), so an event that was recorded before an answer
 * left survives the process as it would have in the database. Segments are files of at most ~4 MB,
 * `<dir>/<number>.log`, removed in order once every event in them is stored; the current one is emptied
 * whenever nothing is outstanding. Not used with DATABASE_URL: there each event is stored, durably, before
 * the answer (bench/README.md, "The token exchange's audit event, written ahead").
 */
export class AuditJournal {
  private fd: number;
  private closed = false;
  private size = 0;
  private seq = 0;
  /** Per segment (in order), how many of its events are not stored yet. */
  private readonly outstanding = new Map<number, number>();
  /** The segment of each event not stored yet. */
  private readonly segmentOf = new Map<number, number>();

  private constructor(
    private readonly dir: string,
    private segment: number,
    private readonly segmentBytes: number,
  ) {
    this.fd = this.openSegment(segment);
    this.outstanding.set(segment, 0);
  }

  /**
   * Opens the journal in `dir` (made if missing). The events an earlier process journaled and did not
   * store are journaled again in the new segment and returned, in their order, with their sequence
   * numbers, for the caller to store; the earlier segments are then removed. A line cut short by a
   * crash is skipped (its event's answer never left).
   */
  static open(
    dir: string,
    options: { segmentBytes?: number } = {},
  ): { journal: AuditJournal; leftovers: { seq: number; event: AuditEvent }[] } {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const segments = fs
      .readdirSync(dir)
      .map((name) => SEGMENT_NAME.exec(name))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const events = new Map<number, AuditEvent>();
    const stored = new Set<number>();
    for (const segment of segments) {
      for (const line of fs.readFileSync(path.join(dir, name(segment)), 'utf8').split('\n')) {
        if (line.startsWith('C')) for (const s of line.slice(1).split(',')) stored.add(Number(s));
        else if (line.startsWith('E')) {
          const space = line.indexOf(' ');
          try {
            events.set(Number(line.slice(1, space)), JSON.parse(line.slice(space + 1)) as AuditEvent);
          } catch {
            // the last line, cut short by a crash while it was written
          }
        }
      }
    }
    const journal = new AuditJournal(dir, (segments.at(-1) ?? 0) + 1, options.segmentBytes ?? SEGMENT_BYTES);
    const left = [...events].filter(([seq]) => !stored.has(seq)).map(([, event]) => event);
    const leftovers = journal.appendAll(left);
    for (const segment of segments) fs.rmSync(path.join(dir, name(segment)), { force: true });
    return { journal, leftovers };
  }

  /** Journals one event; returns its sequence number, for `stored`. Throws when the file cannot be written. */
  append(event: AuditEvent): number {
    return this.appendAll([event])[0].seq;
  }

  /** Marks these events stored in the database; a segment whose events are all stored goes. */
  stored(seqs: readonly number[]): void {
    if (seqs.length === 0) return;
    this.write(commitLine(seqs));
    for (const seq of seqs) {
      const segment = this.segmentOf.get(seq);
      if (segment === undefined) continue;
      this.segmentOf.delete(seq);
      this.outstanding.set(segment, this.outstanding.get(segment)! - 1);
    }
    this.removeStoredSegments();
  }

  /** How many journaled events are not stored yet. */
  get unstored(): number {
    return this.segmentOf.size;
  }

  /** Closes the file; the journal then refuses to write (its descriptor's number may name another file by then). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }

  private appendAll(events: readonly AuditEvent[]): { seq: number; event: AuditEvent }[] {
    if (events.length === 0) return [];
    if (this.size >= this.segmentBytes) this.rotate();
    const out = events.map((event) => ({ seq: ++this.seq, event }));
    this.write(out.map((e) => eventLine(e.seq, e.event)).join(''));
    for (const e of out) this.segmentOf.set(e.seq, this.segment);
    this.outstanding.set(this.segment, this.outstanding.get(this.segment)! + out.length);
    return out;
  }

  private write(text: string): void {
    if (this.closed) throw new Error('the audit journal is closed');
    const bytes = Buffer.from(text);
    fs.writeSync(this.fd, bytes);
    this.size += bytes.length;
  }

  private rotate(): void {
    fs.closeSync(this.fd);
    this.segment++;
    this.fd = this.openSegment(this.segment);
    this.outstanding.set(this.segment, 0);
    this.size = 0;
  }

  /**
   * Removes the oldest segments while every event in them is stored (in order: a segment also holds the
   * stored marks of earlier segments' events), and empties the current one when nothing at all is outstanding.
   */
  private removeStoredSegments(): void {
    for (const [segment, count] of this.outstanding) {
      if (count > 0) return;
      if (segment === this.segment) {
        if (this.size > 0) {
          fs.ftruncateSync(this.fd, 0);
          this.size = 0;
        }
        return;
      }
      fs.rmSync(path.join(this.dir, name(segment)), { force: true });
      this.outstanding.delete(segment);
    }
  }

  private openSegment(segment: number): number {
    // append mode: after the file is emptied, the next line is written at its start
    return fs.openSync(path.join(this.dir, name(segment)), 'a', 0o600);
  }
}

const name = (segment: number) => `${String(segment).padStart(8, '0')}.log`;
