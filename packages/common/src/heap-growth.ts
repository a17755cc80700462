import v8 from 'node:v8';

/** How far past what a full collection kept V8's old generation may grow before the next (default 50 %). */
export const HEAP_GROWING_PERCENT = 50;

/**
 * Lets V8's old generation grow by `percent` over what the last full collection kept before it collects
 * again, instead of V8's own factor, which under a high allocation rate is up to four times the live heap.
 * For `pnpm start`, where three services and the embedded Postgres share one process: under load, objects
 * that live across a few young-generation collections (requests in flight, rows on their way from the
 * database) reach the old generation as garbage, and with V8's factor it grew to ~240 MB over ~100 MB live
 * before a collection took it back (bench/README.md, "pnpm start's peak memory: the old generation's
 * growth"). Process-wide, read by V8 at each full collection: takes effect from the next one.
 */
export function limitHeapGrowth(percent = HEAP_GROWING_PERCENT): void {
  if (!Number.isInteger(percent) || percent < 1)
    throw new RangeError(`heap growth: ${percent} is not a whole percentage`);
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
