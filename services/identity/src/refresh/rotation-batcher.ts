import type { Rotation } from './refresh-store';

/** Most rotations in one statement (three text arrays of this length). */
const MAX_BATCH = 100;

interface Waiting {
  rotation: Rotation;
  resolve(stored: boolean): void;
  reject(err: unknown): void;
}

/**
 * Group commit for rotations (issue 41, bench "refresh-token round trip"): the rotations asked for while one
 * statement runs go together in the next, one statement and one commit for all of them. On the embedded
 * database every statement is a round trip through the single PGlite connection (measured alone: ~0.3–0.4 ms
 * of CPU for one rotation, ~0.14 ms each in a statement of 8, ~0.08 ms in one of 32; bench/README.md), and a
 * request waited for every statement queued before its own. A lone rotation starts at once (on the next
 * tick, with any others of the same tick) as its own one-row statement.
 *
 * Nothing is answered before its statement has committed: each caller learns whether *its* successor was
 * stored, so rotation stays durable and decided by the database (a row is marked used only while it is
 * unused). Two rotations of the same token never share a statement: the later one waits for the next, and
 * finds the token used, as it would have on its own. A statement that fails fails exactly the rotations in it
 * (nothing of it was committed: each may be asked again).
 */
export class RotationBatcher {
  private queued: Waiting[] = [];
  private running = false;
  private scheduled = false;

  constructor(private readonly rotateMany: (rotations: Rotation[]) => Promise<Set<string>>) {}

  /** True when `rotation.usedHash` was unused and is now used, its successor stored. */
  rotate(rotation: Rotation): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queued.push({ rotation, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running || this.queued.length === 0) return;
    this.scheduled = true;
    process.nextTick(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  /** The next statement's rotations, in the order asked: one per presented token, at most MAX_BATCH. */
  private take(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const used = new Set<string>();
    for (const w of this.queued) {
      if (batch.length < MAX_BATCH && !used.has(w.rotation.usedHash)) {
        used.add(w.rotation.usedHash);
        batch.push(w);
      } else rest.push(w);
    }
    this.queued = rest;
    return batch;
  }

  private async run(): Promise<void> {
    if (this.running || this.queued.length === 0) return;
    this.running = true;
    const batch = this.take();
    try {
      const stored = await this.rotateMany(batch.map((w) => w.rotation));
      for (const w of batch) w.resolve(stored.has(w.rotation.nextHash));
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.running = false;
      this.schedule();
    }
  }
}
