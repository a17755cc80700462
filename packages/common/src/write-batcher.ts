/**
 * Group commit: the writes that arrive while one batch is being written go together in the next, in one
 * database transaction with one statement of each kind for all of them, so N concurrent writes cost a few
 * statements and one COMMIT instead of N of each. A lone write still starts at once (after the I/O of the
 * current turn of the event loop, with the others that came in it). Each caller settles with its own
 * outcome. A batch of several that fails with an error about its data (not the database being away) is
 * written again one by one, so a write that the database refuses fails alone.
 *
 * Why (bench/README.md, "What a payment request's creation costs"): on the embedded database every
 * statement is parsed, planned and run in one WebAssembly Postgres that serves one statement at a time,
 * through one connection that a transaction holds from BEGIN to COMMIT; what a statement costs is mostly
 * per statement, not per row.
 */
export interface WriteBatcherOptions<I = unknown> {
  /** Most writes in one batch (keeps each statement's arrays and the transaction short). */
  maxBatch?: number;
  /** Whether a failed batch of several is written again one by one (default: always). */
  retrySingly?: (err: unknown) => boolean;
  /**
   * Items with the same key never share a batch: the later waits for the next, in its order, and meets
   * what the earlier wrote (two rotations of one refresh token: the second finds it used).
   */
  distinct?: (item: I) => string;
}

type Waiter<I, O> = { item: I; resolve(outcome: O): void; reject(err: unknown): void };

export class WriteBatcher<I, O> {
  private queued: Waiter<I, O>[] = [];
  private readonly maxBatch: number;
  private readonly retrySingly: (err: unknown) => boolean;
  private readonly distinct?: (item: I) => string;
  private writing = false;
  private scheduled = false;

  constructor(
    /** Writes these items together: one outcome per item, in their order. */
    private readonly writeMany: (items: I[]) => Promise<O[]>,
    options: WriteBatcherOptions<I> = {},
  ) {
    this.maxBatch = options.maxBatch ?? 100;
    this.retrySingly = options.retrySingly ?? (() => true);
    this.distinct = options.distinct;
  }

  write(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.writing || this.queued.length === 0) return;
    this.scheduled = true;
    // setImmediate, not nextTick: the requests whose bytes came in the same poll of the event loop join
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queued.length > 0) {
        await this.run(this.take());
      }
    } finally {
      this.writing = false;
      this.schedule();
    }
  }

  /** The next batch, in the order written: at most maxBatch, and one item of each distinct key. */
  private take(): Waiter<I, O>[] {
    if (!this.distinct) return this.queued.splice(0, this.maxBatch);
    const batch: Waiter<I, O>[] = [];
    const rest: Waiter<I, O>[] = [];
    const keys = new Set<string>();
    for (const w of this.queued) {
      const key = this.distinct(w.item);
      if (batch.length < this.maxBatch && !keys.has(key)) {
        keys.add(key);
        batch.push(w);
      } else rest.push(w);
    }
    this.queued = rest;
    return batch;
  }

  private async run(batch: Waiter<I, O>[]): Promise<void> {
    let outcomes: O[];
    try {
      outcomes = await this.writeMany(batch.map((w) => w.item));
    } catch (err) {
      if (batch.length > 1 && this.retrySingly(err)) {
        for (const w of batch) await this.run([w]);
      } else {
        for (const w of batch) w.reject(err);
      }
      return;
    }
    if (outcomes.length !== batch.length) {
      const err = new Error(`a batched write gave ${outcomes.length} outcomes for ${batch.length} items`);
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => w.resolve(outcomes[i]));
  }
}
