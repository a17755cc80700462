import { WriteBatcher } from '../src/write-batcher';

/** A writeMany whose calls are recorded and settled by the test. */
function controlledWriter() {
  const calls: { items: string[]; resolve(outcomes: string[]): void; reject(err: Error): void }[] = [];
  const writeMany = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => calls.push({ items, resolve, reject }));
  return { calls, writeMany };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const done = (items: string[]) => items.map((i) => `wrote-${i}`);

describe('WriteBatcher', () => {
  it('writes the items given in one turn together, each caller getting its own outcome', async () => {
    const { calls, writeMany } = controlledWriter();
    const batcher = new WriteBatcher(writeMany);
    const outcomes = Promise.all(['a', 'b', 'c'].map((i) => batcher.write(i)));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([['a', 'b', 'c']]);
    calls[0].resolve(done(calls[0].items));
    await expect(outcomes).resolves.toEqual(['wrote-a', 'wrote-b', 'wrote-c']);
  });

  it('lets writes that arrive while a batch is written wait, and writes them together next, at most maxBatch at once', async () => {
    const { calls, writeMany } = controlledWriter();
    const batcher = new WriteBatcher(writeMany, { maxBatch: 2 });
    const first = batcher.write('a');
    await tick();
    const later = ['b', 'c', 'd'].map((i) => batcher.write(i));
    await tick();
    // one batch at a time: the later ones wait for the first
    expect(calls.map((c) => c.items)).toEqual([['a']]);
    calls[0].resolve(done(['a']));
    await expect(first).resolves.toBe('wrote-a');
    await tick();
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b', 'c']]);
    calls[1].resolve(done(['b', 'c']));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b', 'c'], ['d']]);
    calls[2].resolve(done(['d']));
    await expect(Promise.all(later)).resolves.toEqual(['wrote-b', 'wrote-c', 'wrote-d']);
  });

  it('writes a failed batch again one by one, so only the item the database refuses fails', async () => {
    const writeMany = jest.fn(async (items: string[]) => {
      if (items.includes('bad')) throw new Error('check constraint violated');
      return done(items);
    });
    const batcher = new WriteBatcher(writeMany);
    const outcomes = ['a', 'bad', 'c'].map((i) => batcher.write(i));
    await expect(outcomes[0]).resolves.toBe('wrote-a');
    await expect(outcomes[1]).rejects.toThrow('check constraint violated');
    await expect(outcomes[2]).resolves.toBe('wrote-c');
    expect(writeMany.mock.calls.map(([items]) => items)).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  });

  it('fails the whole batch, without writing it again, when retrySingly says the error is not about one item', async () => {
    const outage = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const writeMany = jest.fn(async (_items: string[]): Promise<string[]> => {
      throw outage;
    });
    const batcher = new WriteBatcher<string, string>(writeMany, {
      retrySingly: (err) => (err as { code?: string }).code !== 'ECONNREFUSED',
    });
    const outcomes = ['a', 'b'].map((i) => batcher.write(i));
    await expect(outcomes[0]).rejects.toBe(outage);
    await expect(outcomes[1]).rejects.toBe(outage);
    expect(writeMany).toHaveBeenCalledTimes(1);
    // and the next write is written as usual
    writeMany.mockImplementationOnce(async () => ['wrote-c']);
    await expect(batcher.write('c')).resolves.toBe('wrote-c');
  });

  it('refuses outcomes that do not match the batch item for item', async () => {
    const batcher = new WriteBatcher(async (items: string[]) => done(items).slice(1));
    const outcomes = ['a', 'b'].map((i) => batcher.write(i));
    await expect(outcomes[0]).rejects.toThrow('a batched write gave 1 outcomes for 2 items');
    await expect(outcomes[1]).rejects.toThrow('a batched write gave 1 outcomes for 2 items');
  });

  it('never puts two items of one distinct key in a batch: the later waits for the next, in order', async () => {
    const { calls, writeMany } = controlledWriter();
    const batcher = new WriteBatcher(writeMany, { distinct: (item: string) => item.split(':')[0] });
    const outcomes = Promise.all(['t1:first', 't2:x', 't1:second', 't3:y', 't1:third'].map((i) => batcher.write(i)));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([['t1:first', 't2:x', 't3:y']]);
    calls[0].resolve(done(calls[0].items));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([['t1:first', 't2:x', 't3:y'], ['t1:second']]);
    calls[1].resolve(done(calls[1].items));
    await tick();
    expect(calls[2].items).toEqual(['t1:third']);
    calls[2].resolve(done(calls[2].items));
    await expect(outcomes).resolves.toEqual(
      ['t1:first', 't2:x', 't1:second', 't3:y', 't1:third'].map((i) => `wrote-${i}`),
    );
  });
});
