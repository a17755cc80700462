import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/** What the collector reads at each check: how busy the event loop was since the last one, and the young generation's size. */
export interface IdleSample {
  /** share of the interval the event loop spent working, 0–1 */
  utilization: number;
  /** bytes V8 holds for its young generation (new space) */
  youngGenerationBytes: number;
}

export interface IdleCollectorOptions {
  /** a full garbage collection */
  collect: () => void;
  sample: () => IdleSample;
  /** the event loop's mean utilization over a quiet spell is below this (default 0.05) */
  quietBelow?: number;
  /** how many intervals a quiet spell spans (default 2) */
  quietIntervals?: number;
  /** intervals between the collections of one quiet spell while the young generation stays grown (default 3) */
  retryIntervals?: number;
  /** a young generation at most this large is left alone (default 4 MB: V8's after a full collection is 1–2 MB) */
  youngAtMost?: number;
}

/** Collections in one quiet spell at most (see idleCollector for why one is not enough). */
const COLLECTIONS_PER_SPELL = 3;

/**
 * Gives back V8's young generation once the process has gone quiet. Under load V8 grows the young
 * generation to its maximum (32 MB on Node 20) and keeps it, resident, however long the process then
 * idles: measured on `pnpm start` (bench/README.md, "What the memory profile of `pnpm start` found"),
 * one full collection after start-up took the program from ~182 to ~152 MB PSS. A quiet spell is
 * quietIntervals intervals whose mean utilization is low (a lone timer's work in one of them does not
 * end it). V8 shrinks the young generation in a full collection only once its allocation rate has been
 * low over its last ~5 s of collections, and the first collection after a burst counts the burst's
 * uncollected objects in that rate: the first collection of a spell empties the young generation, one
 * some seconds later shrinks it (measured: ~8 s after the burst). At most three per spell; none more
 * until the process has been busy again. Never while busy, nor when it is already small.
 * Returns the check to run at each interval (true: it collected).
 */
export function idleCollector(options: IdleCollectorOptions): () => boolean {
  const quietBelow = options.quietBelow ?? 0.05;
  const quietIntervals = options.quietIntervals ?? 2;
  const retryIntervals = options.retryIntervals ?? 3;
  const youngAtMost = options.youngAtMost ?? 4 * 1024 * 1024;
  const recent: number[] = [];
  let collections = 0;
  let sinceCollection = 0;
  return () => {
    const { utilization, youngGenerationBytes } = options.sample();
    recent.push(utilization);
    if (recent.length > quietIntervals) recent.shift();
    sinceCollection++;
    const quiet =
      recent.length === quietIntervals && recent.reduce((sum, u) => sum + u, 0) / quietIntervals < quietBelow;
    if (!quiet) {
      collections = 0;
      return false;
    }
    if (collections >= COLLECTIONS_PER_SPELL || youngGenerationBytes <= youngAtMost) return false;
    if (collections > 0 && sinceCollection < retryIntervals) return false;
    collections++;
    sinceCollection = 0;
    options.collect();
    return true;
  };
}

/** The young generation's size now (V8's new space, plus its large objects). */
function youngGenerationBytes(): number {
  return v8
    .getHeapSpaceStatistics()
    .filter((s) => s.space_name === 'new_space' || s.space_name === 'new_large_object_space')
    .reduce((sum, s) => sum + s.space_size, 0);
}

/** V8's full collection, without starting node with --expose-gc: the flag exposes it to new contexts. */
function fullCollection(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/**
 * Runs idleCollector on this process every intervalMs (default 1 s; a quiet spell is then 2 s) from an
 * unref'd timer: it keeps no process alive. Returns a function that stops it. For long-lived processes
 * that idle most of the time (`pnpm start` on a developer's machine); a collection takes some tens of
 * milliseconds on the main thread, once per quiet spell.
 */
export function collectWhenIdle(intervalMs = 1000): () => void {
  const collect = fullCollection();
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  const check = idleCollector({
    collect,
    sample: () => {
      const now = performance.eventLoopUtilization();
      const utilization = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      return { utilization, youngGenerationBytes: youngGenerationBytes() };
    },
  });
  const timer = setInterval(check, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
