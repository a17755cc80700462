import type { Db } from '@attest/common';
import { toTransfer, type ObservedTransfer, type StoredTransfer, type TransferRow } from '../kernel/chain-transfer';

/** The watcher's scan cursor per chain, and the transfers it kept. SQL only. */
export function chainWatchStore(db: Db) {
  return {
    /** The last block scanned on `chain`, or null before the first scan. */
    async processedBlock(chain: string): Promise<bigint | null> {
      const rows = await db.query<{ processed_block: string }>(
        'SELECT processed_block FROM chain_watch_state WHERE chain = $1',
        [chain],
      );
      return rows.length ? BigInt(rows[0].processed_block) : null;
    },
    /** The first scan of a chain starts after `block`; a replica that got there first wins. */
    async begin(chain: string, block: bigint): Promise<bigint> {
      await db.query(
        'INSERT INTO chain_watch_state (chain, processed_block) VALUES ($1, $2) ON CONFLICT (chain) DO NOTHING',
        [chain, block.toString()],
      );
      return (await this.processedBlock(chain))!;
    },
    /**
     * Moves the cursor from `from` to `to` and keeps the transfers to watched addresses, in one transaction.
     * False (and nothing kept) when the cursor is no longer at `from`: another replica scanned the range.
     */
    async advance(chain: string, from: bigint, to: bigint, transfers: readonly ObservedTransfer[]): Promise<boolean> {
      return db.transaction(async (tx) => {
        const moved = await tx.query(
          `UPDATE chain_watch_state SET processed_block = $3, updated_at = now()
           WHERE chain = $1 AND processed_block = $2 RETURNING chain`,
          [chain, from.toString(), to.toString()],
        );
        if (moved.length === 0) return false;
        if (transfers.length === 0) return true;
        const column = <K extends keyof ObservedTransfer>(key: K) => transfers.map((t) => String(t[key]));
        await tx.query(
          `INSERT INTO chain_transfers
             (chain, transaction_hash, log_index, block_number, block_hash, token, contract, from_address, to_address, value, block_time)
           SELECT $1, t.h, t.i::int, t.n::bigint, t.bh, t.tk, t.c, t.f, t.t, t.v::numeric, t.bt::timestamptz
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
             AS t (h, i, n, bh, tk, c, f, t, v, bt)
           WHERE EXISTS (SELECT 1 FROM chain_watched_recipients w WHERE w.chain = $1 AND w.address = t.t)
           ON CONFLICT DO NOTHING`,
          [
            chain,
            column('transactionHash'),
            column('logIndex'),
            column('blockNumber'),
            column('blockHash'),
            column('token'),
            column('contract'),
            column('from'),
            column('to'),
            column('value'),
            transfers.map((t) => t.blockTime?.toISOString() ?? null),
          ],
        );
        return true;
      });
    },
    /** Which of `addresses` (lower case) the watcher keeps transfers for. */
    async watchedAmong(chain: string, addresses: readonly string[]): Promise<Set<string>> {
      const rows = await db.query<{ address: string }>(
        'SELECT DISTINCT address FROM chain_watched_recipients WHERE chain = $1 AND address = ANY($2::text[])',
        [chain, addresses],
      );
      return new Set(rows.map((r) => r.address));
    },
    /** Blocks of transfers not considered yet whose time is unknown (kept before migration 012). */
    async blocksWithoutTime(chain: string, limit: number): Promise<{ number: bigint; hash: string }[]> {
      const rows = await db.query<{ block_number: string; block_hash: string }>(
        `SELECT DISTINCT block_number, block_hash FROM chain_transfers
         WHERE chain = $1 AND outcome IS NULL AND block_time IS NULL ORDER BY block_number LIMIT $2`,
        [chain, limit],
      );
      return rows.map((r) => ({ number: BigInt(r.block_number), hash: r.block_hash }));
    },
    async setBlockTime(chain: string, blockHash: string, time: Date): Promise<void> {
      await db.query('UPDATE chain_transfers SET block_time = $3 WHERE chain = $1 AND block_hash = $2', [
        chain,
        blockHash,
        time,
      ]);
    },
    /** Transfers kept for `to` on `chain`, oldest first. */
    async transfersTo(chain: string, to: string): Promise<StoredTransfer[]> {
      const rows = await db.query<TransferRow>(
        `SELECT * FROM chain_transfers WHERE chain = $1 AND to_address = $2 ORDER BY block_number, log_index`,
        [chain, to.toLowerCase()],
      );
      return rows.map(toTransfer);
    },
  };
}
export type ChainWatchStore = ReturnType<typeof chainWatchStore>;
