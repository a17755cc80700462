import { RotationBatcher } from '../src/refresh/rotation-batcher';
import type { Rotation } from '../src/refresh/refresh-store';

const rotation = (used: string, next: string): Rotation => ({
  usedHash: used,
  nextHash: next,
  accessJti: `jti-${next}`,
});

/** A statement that can be held open, as the database is while it runs one. */
function fakeStatements() {
  const calls: Rotation[][] = [];
  const pending: { resolve(stored: Set<string>): void; reject(err: unknown): void }[] = [];
  const rotateMany = (batch: Rotation[]) => {
    calls.push(batch);
    return new Promise<Set<string>>((resolve, reject) => pending.push({ resolve, reject }));
  };
  return { calls, pending, rotateMany };
}

const settled = () => new Promise((r) => setImmediate(r));

/**
 * The rotations of refresh tokens (issue 41) go to the database together: those asked for while a statement
 * runs share the next one; two of the same token never share one; each learns whether its own successor
 * was stored; a failed statement fails exactly its rotations.
 */
describe('RotationBatcher', () => {
  it('runs a lone rotation at once, and groups those asked for while it runs into the next statement', async () => {
    const db = fakeStatements();
    const batcher = new RotationBatcher(db.rotateMany);
    const first = batcher.rotate(rotation('a', 'a2'));
    await settled();
    expect(db.calls).toEqual([[rotation('a', 'a2')]]);

    const later = [batcher.rotate(rotation('b', 'b2')), batcher.rotate(rotation('c', 'c2'))];
    await settled();
    expect(db.calls).toHaveLength(1); // one statement at a time: these wait for the first

    db.pending[0].resolve(new Set(['a2']));
    await expect(first).resolves.toBe(true);
    await settled();
    expect(db.calls[1]).toEqual([rotation('b', 'b2'), rotation('c', 'c2')]);
    // b's token was used already (no successor stored for it), c's was not
    db.pending[1].resolve(new Set(['c2']));
    await expect(Promise.all(later)).resolves.toEqual([false, true]);
  });

  it('never puts two rotations of one token in the same statement: the later waits for the next', async () => {
    const db = fakeStatements();
    const batcher = new RotationBatcher(db.rotateMany);
    const answers = [
      batcher.rotate(rotation('a', 'first')),
      batcher.rotate(rotation('a', 'second')),
      batcher.rotate(rotation('b', 'b2')),
    ];
    await settled();
    expect(db.calls).toEqual([[rotation('a', 'first'), rotation('b', 'b2')]]);
    db.pending[0].resolve(new Set(['first', 'b2']));
    await settled();
    expect(db.calls[1]).toEqual([rotation('a', 'second')]);
    db.pending[1].resolve(new Set()); // the database finds a used already
    await expect(Promise.all(answers)).resolves.toEqual([true, false, true]);
  });

  it('a statement that fails fails its own rotations only; the next statement still runs', async () => {
    const db = fakeStatements();
    const batcher = new RotationBatcher(db.rotateMany);
    const failing = batcher.rotate(rotation('a', 'a2'));
    await settled();
    const waiting = batcher.rotate(rotation('b', 'b2'));
    const boom = new Error('connection lost');
    db.pending[0].reject(boom);
    await expect(failing).rejects.toBe(boom);
    await settled();
    expect(db.calls[1]).toEqual([rotation('b', 'b2')]);
    db.pending[1].resolve(new Set(['b2']));
    await expect(waiting).resolves.toBe(true);
  });

  it('puts at most 100 rotations in one statement', async () => {
    const db = fakeStatements();
    const batcher = new RotationBatcher(db.rotateMany);
    const answers = Array.from({ length: 150 }, (_, i) => batcher.rotate(rotation(`t${i}`, `n${i}`)));
    await settled();
    expect(db.calls.map((c) => c.length)).toEqual([100]);
    db.pending[0].resolve(new Set(db.calls[0].map((r) => r.nextHash)));
    await settled();
    expect(db.calls.map((c) => c.length)).toEqual([100, 50]);
    db.pending[1].resolve(new Set(db.calls[1].map((r) => r.nextHash)));
    expect(new Set(await Promise.all(answers))).toEqual(new Set([true]));
  });
});
