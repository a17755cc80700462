import type { RefreshRecord } from './refresh-store';

/** How many unused refresh tokens this process remembers; past it, the oldest are forgotten first. */
const MAX_FRESH = 10_000;

/**
 * The records of refresh tokens this process issued and has not seen used (issue 41, bench "refresh-token
 * round trip"): a client that refreshes at the process that gave it its token skips the token's lookup,
 * ~0.4 ms of PGlite per refresh. Only the hash and what the row holds are kept (never a token). A record is
 * taken once; it is only a guess of the stored row: the rotation itself marks the stored row used only while
 * it is there and unused, and a refresh that fails with a remembered record is decided again from the stored
 * row (RefreshTokens.refresh), so a family ended elsewhere (another replica, a session's end) answers the same.
 */
export class FreshRecords {
  private readonly records = new Map<string, RefreshRecord>();

  constructor(private readonly max = MAX_FRESH) {}

  add(record: RefreshRecord): void {
    if (this.records.size >= this.max) this.records.delete(this.records.keys().next().value as string);
    this.records.set(record.tokenHash, record);
  }

  take(tokenHash: string): RefreshRecord | undefined {
    const record = this.records.get(tokenHash);
    if (record) this.records.delete(tokenHash);
    return record;
  }

  get size(): number {
    return this.records.size;
  }
}
