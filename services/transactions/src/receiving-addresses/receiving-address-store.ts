import { preparedStatement, type Queryable } from '@attest/common';

/** How a receiving address was added: by an operator, or proven by a signature of its holder. */
export type ReceivingAddressProof = 'operator' | 'eip191' | 'eip1271';

/** An address an app receives payments at on one chain (lower case). */
export interface ReceivingAddress {
  appId: string;
  chain: string;
  address: string;
  proof: ReceivingAddressProof;
  createdAt: Date;
}

/** A challenge an app asked to sign with an address, bound to the app, the chain and the address. */
export interface AddressChallenge {
  id: string;
  appId: string;
  chain: string;
  address: string;
  message: string;
  expiresAt: Date;
}

interface Row {
  app_id: string;
  chain: string;
  address: string;
  proof: ReceivingAddressProof;
  created_at: Date;
}

interface ChallengeRow {
  id: string;
  app_id: string;
  chain: string;
  address: string;
  message: string;
  expires_at: Date;
}

const toAddress = (r: Row): ReceivingAddress => ({
  appId: r.app_id,
  chain: r.chain,
  address: r.address,
  proof: r.proof,
  createdAt: r.created_at,
});

const toChallenge = (r: ChallengeRow): AddressChallenge => ({
  id: r.id,
  appId: r.app_id,
  chain: r.chain,
  address: r.address,
  message: r.message,
  expiresAt: r.expires_at,
});

/**
 * receiving_addresses and receiving_address_challenges (migration 013); `db` may be a transaction. Chains
 * and addresses are stored lower case: callers pass them so.
 */
export function receivingAddressStore(db: Queryable) {
  return {
    /** The app that holds (chain, address), or null. */
    async ownerOf(chain: string, address: string): Promise<string | null> {
      const [row] = await db.query<{ app_id: string }>(
        preparedStatement('SELECT app_id FROM receiving_addresses WHERE chain = $1 AND address = $2'),
        [chain, address],
      );
      return row?.app_id ?? null;
    },
    async find(chain: string, address: string): Promise<ReceivingAddress | null> {
      const [row] = await db.query<Row>('SELECT * FROM receiving_addresses WHERE chain = $1 AND address = $2', [
        chain,
        address,
      ]);
      return row ? toAddress(row) : null;
    },
    /**
     * Adds (chain, address) to the app: the stored row, `added` false when the app held it already (its first
     * proof stays); null when another app holds it (the primary key decides, across replicas).
     */
    async add(
      appId: string,
      chain: string,
      address: string,
      proof: ReceivingAddressProof,
    ): Promise<{ address: ReceivingAddress; added: boolean } | null> {
      const [inserted] = await db.query<Row>(
        `INSERT INTO receiving_addresses (chain, address, app_id, proof) VALUES ($1, $2, $3, $4)
         ON CONFLICT (chain, address) DO NOTHING RETURNING *`,
        [chain, address, appId, proof],
      );
      if (inserted) return { address: toAddress(inserted), added: true };
      const held = await this.find(chain, address);
      return held && held.appId === appId ? { address: held, added: false } : null;
    },
    /** The app's addresses, by chain then address; of one chain when given. */
    async listForApp(appId: string, chain?: string): Promise<ReceivingAddress[]> {
      const rows = await db.query<Row>(
        `SELECT * FROM receiving_addresses WHERE app_id = $1 AND ($2::text IS NULL OR chain = $2)
         ORDER BY chain, address`,
        [appId, chain ?? null],
      );
      return rows.map(toAddress);
    },
    /** Removes the app's (chain, address); the removed row, or null when the app does not hold it. */
    async remove(appId: string, chain: string, address: string): Promise<ReceivingAddress | null> {
      const [row] = await db.query<Row>(
        'DELETE FROM receiving_addresses WHERE chain = $1 AND address = $2 AND app_id = $3 RETURNING *',
        [chain, address, appId],
      );
      return row ? toAddress(row) : null;
    },
    async insertChallenge(c: AddressChallenge): Promise<void> {
      await db.query(
        `INSERT INTO receiving_address_challenges (id, app_id, chain, address, message, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [c.id, c.appId, c.chain, c.address, c.message, c.expiresAt],
      );
    },
    /**
     * Serialises the challenges made for one app until the end of the caller's transaction (the bound on open
     * challenges is counted and kept across replicas).
     */
    async lockAppChallenges(appId: string): Promise<void> {
      await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`attest:receiving-address-challenges:${appId}`]);
    },
    /** The app's challenges not used nor expired at `now`: how many, and when the first of them expires. */
    async openChallenges(appId: string, now: Date): Promise<{ count: number; firstExpiry: Date | null }> {
      const [row] = await db.query<{ n: string | number; first: Date | string | null }>(
        `SELECT count(*) AS n, min(expires_at) AS first FROM receiving_address_challenges
         WHERE app_id = $1 AND expires_at > $2`,
        [appId, now],
      );
      return { count: Number(row.n), firstExpiry: row.first === null ? null : new Date(row.first) };
    },
    /**
     * Takes the app's challenge: deleted as it is read, so it is used once, whatever the proof's outcome
     * (two concurrent proofs of one challenge: one gets it). Null when the app has no such challenge.
     */
    async takeChallenge(appId: string, id: string): Promise<AddressChallenge | null> {
      const [row] = await db.query<ChallengeRow>(
        'DELETE FROM receiving_address_challenges WHERE id = $1 AND app_id = $2 RETURNING *',
        [id, appId],
      );
      return row ? toChallenge(row) : null;
    },
    /** Deletes challenges expired before `before` (never signed); how many. */
    async deleteExpiredChallenges(before: Date): Promise<number> {
      const rows = await db.query('DELETE FROM receiving_address_challenges WHERE expires_at < $1 RETURNING id', [
        before,
      ]);
      return rows.length;
    },
  };
}
export type ReceivingAddressStore = ReturnType<typeof receivingAddressStore>;
