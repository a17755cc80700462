/**
 * Group commit: coalesces writes into batched ones (one multi-row INSERT), the writes' counterpart of
 * KeyBatcher. Each caller still awaits its own write, and its promise settles only when the batch that
 * holds it was written (or failed), so nothing is acknowledged before it is stored. Under concurrent load
 * the writes that arrive while a batch is being written go together in the next one, so N writes cost a
 * few statements (and a few commits) instead of N. A lone write starts at once (on the next tick, with
 * any others of the same tick). One batch is written at a time, in the order the writes came, so rows
 * that take their ids from a sequence keep that order. A failed batch fails exactly the writes it held.
 */
export interface WriteBatcherOptions {
  /** Most items in one write (keeps each statement's parameters small). */
  maxBatch?: number;
}

type Queued<T> = { item: T; resolve(): void; reject(err: unknown): void };

export class WriteBatcher<T> {
  private queued: Queued<T>[] = [];
  private readonly maxBatch: number;
  private writing = false;
  private scheduled = false;
  private readonly idle: (() => void)[] = [];

  constructor(
    /** Writes these items, in this order, as one unit: all of them or none. */
    private readonly writeMany: (items: T[]) => Promise<void>,
    options: WriteBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 200;
  }

  /** Resolves when the item is written; rejects with the batch's error when its batch failed. */
  write(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once every write accepted so far has settled (a shutdown waits for this). */
  settled(): Promise<void> {
    if (!this.writing && this.queued.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.writing || this.queued.length === 0) return;
    this.scheduled = true;
    process.nextTick(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.writing || this.queued.length === 0) return;
    this.writing = true;
    const batch = this.queued.slice(0, this.maxBatch);
    this.queued = this.queued.slice(batch.length);
    try {
      await this.writeMany(batch.map((q) => q.item));
      for (const q of batch) q.resolve();
    } catch (err) {
      for (const q of batch) q.reject(err);
    } finally {
      this.writing = false;
      if (this.queued.length > 0) this.schedule();
      else for (const done of this.idle.splice(0)) done();
    }
  }
}
