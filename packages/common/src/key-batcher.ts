/**
 * Coalesces lookups by key into batched loads (`WHERE id = ANY($1)`): under concurrent load, the
 * lookups that arrive while a batch is being read go together in the next one, so N cache misses
 * cost a few queries instead of N. A lone lookup still starts at once (on the next tick, with any
 * others of the same tick). Each caller settles with its own row; a failed load fails exactly the
 * lookups of its batch.
 */
export interface KeyBatcherOptions {
  /** Most keys in one load (keeps each query's parameter list and result small). */
  maxBatch?: number;
  /** Loads running at once; the others wait and grow. */
  maxInFlight?: number;
}

type Waiter<V> = { resolve(value: V | null): void; reject(err: unknown): void };

export class KeyBatcher<V> {
  private readonly queued = new Map<string, Waiter<V>[]>();
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private inFlight = 0;
  private scheduled = false;

  constructor(
    /** Loads the rows of these (distinct) keys; a key missing from the answer is an absent row. */
    private readonly loadMany: (keys: string[]) => Promise<Map<string, V>>,
    options: KeyBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 100;
    this.maxInFlight = options.maxInFlight ?? 2;
  }

  load(key: string): Promise<V | null> {
    return new Promise<V | null>((resolve, reject) => {
      const waiters = this.queued.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.queued.set(key, [{ resolve, reject }]);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queued.size === 0) return;
    this.scheduled = true;
    process.nextTick(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    while (this.inFlight < this.maxInFlight && this.queued.size > 0) {
      const batch = new Map<string, Waiter<V>[]>();
      for (const [key, waiters] of this.queued) {
        batch.set(key, waiters);
        this.queued.delete(key);
        if (batch.size >= this.maxBatch) break;
      }
      this.inFlight++;
      void this.run(batch);
    }
  }

  private async run(batch: Map<string, Waiter<V>[]>): Promise<void> {
    try {
      const rows = await this.loadMany([...batch.keys()]);
      for (const [key, waiters] of batch) {
        const row = rows.get(key) ?? null;
        for (const w of waiters) w.resolve(row);
      }
    } catch (err) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
