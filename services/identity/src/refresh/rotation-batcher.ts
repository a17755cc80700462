import { WriteBatcher } from '@attest/common';
import type { Rotation } from './refresh-store';

/** Most rotations in one statement (three text arrays of this length). */
const MAX_BATCH = 100;

/**
 * Group commit for rotations (issue 41, bench "refresh-token round trip"): the rotations asked for while one
 * statement runs go together in the next, one statement and one commit for all of them (WriteBatcher). On the
 * embedded database every statement is a round trip through the single PGlite connection (measured alone:
 * ~0.3–0.4 ms of CPU for one rotation, ~0.14 ms each in a statement of 8, ~0.08 ms in one of 32;
 * bench/README.md), and a request waited for every statement queued before its own. A lone rotation starts
 * at once (with any others of the same turn of the event loop) as its own one-row statement.
 *
 * Nothing is answered before its statement has committed: each caller learns whether *its* successor was
 * stored, so rotation stays durable and decided by the database (a row is marked used only while it is
 * unused). Two rotations of the same token never share a statement: the later one waits for the next, and
 * finds the token used, as it would have on its own. A statement that fails fails exactly the rotations in it
 * (nothing of it was committed: each may be asked again); they are not written again one by one.
 */
export class RotationBatcher {
  private readonly batcher: WriteBatcher<Rotation, boolean>;

  constructor(rotateMany: (rotations: Rotation[]) => Promise<Set<string>>) {
    this.batcher = new WriteBatcher(
      async (rotations: Rotation[]) => {
        const stored = await rotateMany(rotations);
        return rotations.map((r) => stored.has(r.nextHash));
      },
      { maxBatch: MAX_BATCH, retrySingly: () => false, distinct: (r) => r.usedHash },
    );
  }

  /** True when `rotation.usedHash` was unused and is now used, its successor stored. */
  rotate(rotation: Rotation): Promise<boolean> {
    return this.batcher.write(rotation);
  }
}
