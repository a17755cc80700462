import type { Transaction } from '../kernel/transaction';

/**
 * A transaction as the lookup cache keeps it (up to 20,000 of them per process): about 200 bytes of
 * heap instead of about 750 for the row as read. The id is the cache key's own string; the strings
 * that repeat across rows (app, type, status, chain, token, addresses, reason) are shared; the two
 * timestamps are numbers (a Date object costs more than 100 bytes).
 */
export interface CachedTransaction {
  readonly id: string;
  readonly appId: string;
  readonly type: Transaction['type'];
  readonly reference: string;
  readonly transactionHash: string | null;
  readonly status: Transaction['status'];
  readonly from: string;
  readonly to: string;
  readonly chain: string;
  readonly token: string;
  readonly tokenAmount: string;
  readonly statusReason: string | null;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/**
 * One shared copy of each string seen, for values that repeat across many rows. Bounded: past `max`
 * distinct strings it starts over (strings still used by cached rows stay alive through those rows).
 */
export class StringPool {
  private readonly strings = new Map<string, string>();

  constructor(private readonly max = 4096) {}

  share<T extends string | null>(value: T): T {
    if (value === null) return value;
    const known = this.strings.get(value);
    if (known !== undefined) return known as T;
    if (this.strings.size >= this.max) this.strings.clear();
    this.strings.set(value, value);
    return value;
  }

  get size(): number {
    return this.strings.size;
  }
}

/** The compact form of `t`, looked up as `key`: when that is its id, the key's string is kept, not a copy. */
export function compactTransaction(key: string, t: Transaction, pool: StringPool): CachedTransaction {
  return {
    id: t.id === key ? key : t.id,
    appId: pool.share(t.appId),
    type: pool.share(t.type),
    reference: t.reference,
    transactionHash: t.transactionHash,
    status: pool.share(t.status),
    from: pool.share(t.from),
    to: pool.share(t.to),
    chain: pool.share(t.chain),
    token: pool.share(t.token),
    tokenAmount: t.tokenAmount,
    statusReason: pool.share(t.statusReason),
    createdAtMs: t.createdAt.getTime(),
    updatedAtMs: t.updatedAt.getTime(),
  };
}

/** The transaction a caller gets: a fresh object (with its own Dates) on each lookup. */
export function expandTransaction(c: CachedTransaction): Transaction {
  return {
    id: c.id,
    appId: c.appId,
    type: c.type,
    reference: c.reference,
    transactionHash: c.transactionHash,
    status: c.status,
    from: c.from,
    to: c.to,
    chain: c.chain,
    token: c.token,
    tokenAmount: c.tokenAmount,
    statusReason: c.statusReason,
    createdAt: new Date(c.createdAtMs),
    updatedAt: new Date(c.updatedAtMs),
  };
}
