import { WriteBatcher } from '../src/write-batcher';

/** A writeMany whose calls are recorded and settled by the test. */
function controlledWriter() {
  const calls: { items: number[]; resolve(): void; reject(err: Error): void }[] = [];
  const writeMany = (items: number[]) => new Promise<void>((resolve, reject) => calls.push({ items, resolve, reject }));
  return { calls, writeMany };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Whether a promise has settled by now, and how. */
function watch(promise: Promise<void>) {
  const state = { settled: 'no' as 'no' | 'resolved' | 'rejected' };
  promise.then(
    () => (state.settled = 'resolved'),
    () => (state.settled = 'rejected'),
  );
  return state;
}

describe('WriteBatcher', () => {
  it('writes the items of one tick in one write, and each caller settles only once that write is done', async () => {
    const { calls, writeMany } = controlledWriter();
    const batcher = new WriteBatcher(writeMany);
    const writes = [1, 2, 3].map((n) => watch(batcher.write(n)));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2, 3]]);
    expect(writes.map((w) => w.settled)).toEqual(['no', 'no', 'no']);
    calls[0].resolve();
    await tick();
    expect(writes.map((w) => w.settled)).toEqual(['resolved', 'resolved', 'resolved']);
  });

  it('writes one batch at a time, in order: the items that come meanwhile go together in the next', async () => {
    const { calls, writeMany } = controlledWriter();
    const batcher = new WriteBatcher(writeMany);
    const first = watch(batcher.write(1));
    await tick();
    const later = [2, 3, 4].map((n) => watch(batcher.write(n)));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1]]);
    calls[0].resolve();
    await tick();
    expect(first.settled).toBe('resolved');
    expect(calls.map((c) => c.items)).toEqual([[1], [2, 3, 4]]);
    expect(later.map((w) => w.settled)).toEqual(['no', 'no', 'no']);
    calls[1].resolve();
    await tick();
    expect(later.map((w) => w.settled)).toEqual(['resolved', 'resolved', 'resolved']);
  });

  it('splits at maxBatch items', async () => {
    const { calls, writeMany } = controlledWriter();
    const batcher = new WriteBatcher(writeMany, { maxBatch: 2 });
    const all = Promise.all([1, 2, 3].map((n) => batcher.write(n)));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2]]);
    calls[0].resolve();
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2], [3]]);
    calls[1].resolve();
    await expect(all).resolves.toHaveLength(3);
  });

  it('fails exactly the writes of a failed batch; the next batch still runs', async () => {
    const { calls, writeMany } = controlledWriter();
    const batcher = new WriteBatcher(writeMany);
    const failed = [batcher.write(1), batcher.write(2)];
    await tick();
    const next = batcher.write(3);
    calls[0].reject(new Error('connection refused'));
    for (const f of failed) await expect(f).rejects.toThrow('connection refused');
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2], [3]]);
    calls[1].resolve();
    await expect(next).resolves.toBeUndefined();
  });

  it('settled() waits for the batch being written and those queued behind it', async () => {
    const { calls, writeMany } = controlledWriter();
    const batcher = new WriteBatcher(writeMany, { maxBatch: 1 });
    await expect(batcher.settled()).resolves.toBeUndefined();
    void batcher.write(1);
    void batcher.write(2);
    await tick();
    const settled = watch(batcher.settled());
    calls[0].resolve();
    await tick();
    expect(settled.settled).toBe('no');
    calls[1].resolve();
    await tick();
    expect(settled.settled).toBe('resolved');
  });
});
