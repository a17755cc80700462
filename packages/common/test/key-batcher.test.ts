import { KeyBatcher } from '../src/key-batcher';

/** A loadMany whose calls are recorded and settled by the test. */
function controlledLoader() {
  const calls: { keys: string[]; resolve(rows: Map<string, string>): void; reject(err: Error): void }[] = [];
  const loadMany = (keys: string[]) =>
    new Promise<Map<string, string>>((resolve, reject) => calls.push({ keys, resolve, reject }));
  return { calls, loadMany };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const rowsOf = (keys: string[]) => new Map(keys.filter((k) => !k.startsWith('absent')).map((k) => [k, `row-${k}`]));

describe('KeyBatcher', () => {
  it('reads the keys asked for in one tick in one load, each caller getting its own row (null when absent)', async () => {
    const { calls, loadMany } = controlledLoader();
    const batcher = new KeyBatcher(loadMany);
    const answers = Promise.all([batcher.load('a'), batcher.load('b'), batcher.load('absent-c'), batcher.load('a')]);
    await tick();
    expect(calls.map((c) => c.keys)).toEqual([['a', 'b', 'absent-c']]);
    calls[0].resolve(rowsOf(calls[0].keys));
    await expect(answers).resolves.toEqual(['row-a', 'row-b', null, 'row-a']);
  });

  it('lets lookups that arrive while the loads are running wait, and reads them together in the next load', async () => {
    const { calls, loadMany } = controlledLoader();
    const batcher = new KeyBatcher(loadMany, { maxInFlight: 1 });
    const first = batcher.load('a');
    await tick();
    const later = ['b', 'c', 'd'].map((k) => batcher.load(k));
    await tick();
    expect(calls.map((c) => c.keys)).toEqual([['a']]);
    calls[0].resolve(rowsOf(['a']));
    await expect(first).resolves.toBe('row-a');
    await tick();
    expect(calls.map((c) => c.keys)).toEqual([['a'], ['b', 'c', 'd']]);
    calls[1].resolve(rowsOf(calls[1].keys));
    await expect(Promise.all(later)).resolves.toEqual(['row-b', 'row-c', 'row-d']);
  });

  it('runs up to maxInFlight loads at once and splits at maxBatch keys', async () => {
    const { calls, loadMany } = controlledLoader();
    const batcher = new KeyBatcher(loadMany, { maxBatch: 2, maxInFlight: 2 });
    const answers = Promise.all(['a', 'b', 'c', 'd', 'e'].map((k) => batcher.load(k)));
    await tick();
    expect(calls.map((c) => c.keys)).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    calls[1].resolve(rowsOf(calls[1].keys));
    await tick();
    expect(calls.map((c) => c.keys)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    calls[0].resolve(rowsOf(calls[0].keys));
    calls[2].resolve(rowsOf(calls[2].keys));
    await expect(answers).resolves.toEqual(['row-a', 'row-b', 'row-c', 'row-d', 'row-e']);
  });

  it('fails exactly the lookups of a failed load; the next load still runs', async () => {
    const { calls, loadMany } = controlledLoader();
    const batcher = new KeyBatcher(loadMany, { maxInFlight: 1 });
    const failing = [batcher.load('a'), batcher.load('b')];
    await tick();
    const next = batcher.load('c');
    calls[0].reject(new Error('connection lost'));
    for (const f of failing) await expect(f).rejects.toThrow('connection lost');
    await tick();
    expect(calls.map((c) => c.keys)).toEqual([['a', 'b'], ['c']]);
    calls[1].resolve(rowsOf(['c']));
    await expect(next).resolves.toBe('row-c');
  });
});
