import { preparedStatement, type Db, type Queryable } from '@attest/common';
import type { SettleResponse } from '@x402/core/types';

/** One EIP-3009 authorization: what makes it unique on chain (the token's authorizationState key, per network). */
export interface AuthorizationKey {
  network: string;
  /** The token contract, lower case. */
  token: string;
  /** The payer (authorization.from), lower case. */
  payer: string;
  /** authorization.nonce, lower case. */
  nonce: string;
}

export interface SettlementRow extends AuthorizationKey {
  appId: string;
  payTo: string;
  value: string;
  transactionHash: string | null;
  outcome: SettleResponse | null;
  leaseUntil: Date;
  /** The claim's fencing token: 1, increased by each take-over (021_x402_claim_fence.sql). */
  fence: number;
  /** The person behind the agent the attest-human proof named (023_x402_human.sql), when the seller asked. */
  human: { sub: string; agent: string } | null;
  /**
   * What the claim's payment is for (024_x402_claim_purpose.sql): the resource's URL and the hash of the
   * seller's requirements. Both null on a row claimed before that migration.
   */
  resource: string | null;
  requirementsHash: string | null;
  /** The payment-identifier's id claimed with it (024), or null (none sent, or freed: see claim). */
  paymentId: string | null;
  /**
   * The authorization's validAfter and validBefore (025_x402_claim_authorization.sql): with its key (from,
   * nonce), payTo (its `to`) and value, what the payer signed. Null on a row claimed before that migration.
   */
  validAfter: string | null;
  validBefore: string | null;
}

/** What a claim pays for (payment-purpose.ts): a settle of the same authorization for anything else is refused. */
export interface ClaimPurpose {
  resource: string | null;
  requirementsHash: string;
}

/** The claim's payment-identifier is held by another authorization's claim of the app (in flight or settled). */
export class PaymentIdClaimed extends Error {
  constructor(readonly id: string) {
    super(`payment-identifier ${id} is claimed by another authorization`);
  }
}

/** Rolls back a transaction whose claim found the authorization claimed already. */
class NotClaimed extends Error {}

const PAYMENT_ID_INDEX = 'x402_settlements_payment_id_idx';
const isPaymentIdConflict = (err: unknown) =>
  (err as { code?: unknown }).code === '23505' && (err as { constraint?: unknown }).constraint === PAYMENT_ID_INDEX;

interface Row {
  network: string;
  token: string;
  payer: string;
  nonce: string;
  app_id: string;
  pay_to: string;
  value: string;
  transaction_hash: string | null;
  outcome: SettleResponse | string | null;
  lease_until: Date | string;
  fence: string | number;
  human_sub: string | null;
  human_agent: string | null;
  resource: string | null;
  requirements_hash: string | null;
  payment_id?: string | null;
  valid_after?: string | null;
  valid_before?: string | null;
}

const toRow = (r: Row): SettlementRow => ({
  network: r.network,
  token: r.token,
  payer: r.payer,
  nonce: r.nonce,
  appId: r.app_id,
  payTo: r.pay_to,
  value: String(r.value),
  transactionHash: r.transaction_hash,
  outcome: typeof r.outcome === 'string' ? (JSON.parse(r.outcome) as SettleResponse) : r.outcome,
  leaseUntil: new Date(r.lease_until),
  fence: Number(r.fence),
  human: r.human_sub !== null && r.human_agent !== null ? { sub: r.human_sub, agent: r.human_agent } : null,
  resource: r.resource ?? null,
  requirementsHash: r.requirements_hash ?? null,
  paymentId: r.payment_id ?? null,
  validAfter: r.valid_after === null || r.valid_after === undefined ? null : String(r.valid_after),
  validBefore: r.valid_before === null || r.valid_before === undefined ? null : String(r.valid_before),
});

const KEY = 'network = $1 AND token = $2 AND payer = $3 AND nonce = $4';
const keyParams = (k: AuthorizationKey) => [k.network, k.token, k.payer, k.nonce];

const MAX_FINDS_TOGETHER = 200;

const keyOf = (k: { network: string; token: string; payer: string; nonce: string }) =>
  `${k.network}\n${k.token}\n${k.payer}\n${k.nonce}`;

/** What a claim stores besides its key (settlementStore's claim). */
export interface Claim {
  appId: string;
  /** paymentRequirements.payTo, lower case: the authorization's `to` (verify requires them equal). */
  payTo: string;
  /** authorization.value. */
  value: string;
  leaseMs: number;
  human?: { sub: string; agent: string } | null;
  purpose?: ClaimPurpose | null;
  paymentId?: string | null;
  /** authorization.validAfter and validBefore; absent, the row is as one claimed before 025. */
  validAfter?: string | null;
  validBefore?: string | null;
}

const CLAIM = `INSERT INTO x402_settlements
    (network, token, payer, nonce, app_id, pay_to, value, lease_until, human_sub, human_agent,
     resource, requirements_hash, payment_id, valid_after, valid_before)
  VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8::double precision / 1000), $9, $10,
    $11, $12, $13, $14, $15)
  ON CONFLICT (network, token, payer, nonce) DO UPDATE
    SET app_id = EXCLUDED.app_id, pay_to = EXCLUDED.pay_to, value = EXCLUDED.value,
        claimed_at = now(), lease_until = EXCLUDED.lease_until, fence = x402_settlements.fence + 1,
        human_sub = EXCLUDED.human_sub, human_agent = EXCLUDED.human_agent,
        resource = EXCLUDED.resource, requirements_hash = EXCLUDED.requirements_hash,
        payment_id = EXCLUDED.payment_id, valid_after = EXCLUDED.valid_after, valid_before = EXCLUDED.valid_before
    WHERE x402_settlements.transaction_hash IS NULL AND x402_settlements.outcome IS NULL
      AND x402_settlements.lease_until < now()
  RETURNING fence`;

/**
 * Frees `paymentId` of the app from another authorization's claim abandoned before anything was sent (no
 * transaction hash, no outcome, its lease over): whether one was freed. The row stays, its payment_id nulled
 * and its fencing token increased, as a take-over does: the settle that held it, were it only stalled, can no
 * longer store a hash (so it sends nothing under an id another claim now holds), and a retry of that
 * authorization may take the row over later (claiming the id again, so refused while the new holder has it).
 * The row is not deleted: a new claim of that authorization would start its token at 1 again, the token the
 * stalled settle holds.
 */
async function freeAbandoned(q: Queryable, key: AuthorizationKey, appId: string, paymentId: string): Promise<boolean> {
  const rows = await q.query<{ nonce: string }>(
    `UPDATE x402_settlements SET payment_id = NULL, fence = fence + 1
     WHERE app_id = $5 AND payment_id = $6 AND transaction_hash IS NULL AND outcome IS NULL AND lease_until < now()
       AND NOT (${KEY})
     RETURNING nonce`,
    [...keyParams(key), appId, paymentId],
  );
  return rows.length > 0;
}

/** The x402_settlements table: one row per authorization, claimed before its transaction is submitted. */
export function settlementStore(db: Queryable & Partial<Pick<Db, 'transaction'>>) {
  /**
   * The finds asked since the last statement: every verify asks one (is the authorization being settled?),
   * so those that arrive together (the requests one turn of the event loop reads) are one statement, sent
   * at the end of that turn. Each is still read after it was asked: no answer is reused.
   */
  let pending: { key: AuthorizationKey; resolve: (row: SettlementRow | null) => void; reject: (e: unknown) => void }[] =
    [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    if (!batch.length) return;
    try {
      const rows =
        batch.length === 1
          ? await db.query<Row>(
              preparedStatement(`SELECT * FROM x402_settlements WHERE ${KEY}`),
              keyParams(batch[0].key),
            )
          : await db.query<Row>(
              preparedStatement(
                `SELECT s.* FROM x402_settlements s
                 JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS k(network, token, payer, nonce)
                   USING (network, token, payer, nonce)`,
              ),
              [0, 1, 2, 3].map((i) => batch.map((p) => keyParams(p.key)[i])),
            );
      const found = new Map(rows.map((r) => [keyOf(r), r]));
      for (const p of batch) {
        const row = found.get(keyOf(p.key));
        p.resolve(row ? toRow(row) : null);
      }
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  };
  return {
    find(key: AuthorizationKey): Promise<SettlementRow | null> {
      return new Promise((resolve, reject) => {
        const waiting = pending.push({ key, resolve, reject });
        if (waiting === 1) setImmediate(() => void flush());
        // a statement carries at most so many; the rest go in the next
        else if (waiting === MAX_FINDS_TOGETHER) void flush();
      });
    },
    /**
     * Claims the authorization for `appId`: its fencing token, or null when it is claimed already. A claim
     * without a transaction hash whose lease ran out (its replica stopped, or went quiet, before submitting)
     * is taken over, with the next token: the settle that held it can no longer store a hash (setTransactionHash).
     * The claim keeps what it pays for (`purpose`) and what the payer signed (`validAfter`, `validBefore`; with
     * the key, payTo and value); a take-over replaces them (the first holder sent nothing).
     * Throws PaymentIdClaimed when its `paymentId` is held by another authorization's claim of the app (in flight
     * or settled successfully). A holder abandoned before anything was sent (no transaction hash, its lease over)
     * holds it no more: it is freed (freeAbandoned) and the id claimed, in one transaction.
     */
    async claim(key: AuthorizationKey, claim: Claim): Promise<number | null> {
      const params = [
        ...keyParams(key),
        claim.appId,
        claim.payTo,
        claim.value,
        claim.leaseMs,
        claim.human?.sub ?? null,
        claim.human?.agent ?? null,
        claim.purpose?.resource ?? null,
        claim.purpose?.requirementsHash ?? null,
        claim.paymentId ?? null,
        claim.validAfter ?? null,
        claim.validBefore ?? null,
      ];
      const insert = async (q: Queryable) => {
        const [row] = await q.query<{ fence: string | number }>(CLAIM, params);
        return row ? Number(row.fence) : null;
      };
      try {
        return await insert(db);
      } catch (err) {
        if (!isPaymentIdConflict(err) || !claim.paymentId) throw err;
      }
      const paymentId = claim.paymentId;
      if (!db.transaction)
        throw new Error('x402 claims with a payment-identifier need the database, not one connection');
      try {
        return await db.transaction(async (tx) => {
          if (!(await freeAbandoned(tx, key, claim.appId, paymentId))) throw new PaymentIdClaimed(paymentId);
          const fence = await insert(tx);
          // the authorization is claimed by a settle that is alive: nothing is freed either
          if (fence === null) throw new NotClaimed();
          return fence;
        });
      } catch (err) {
        if (err instanceof NotClaimed) return null;
        // held by a claim that is alive, or taken meanwhile by another one (rolled back: nothing was freed)
        throw isPaymentIdConflict(err) ? new PaymentIdClaimed(paymentId) : err;
      }
    },
    /**
     * The transaction that carries the authorization, before it is broadcast: stored only while the claim is
     * still the caller's (its fencing token) and has none. False when it was taken over: send nothing then.
     */
    async setTransactionHash(key: AuthorizationKey, fence: number, hash: string, leaseMs: number): Promise<boolean> {
      const rows = await db.query<{ nonce: string }>(
        `UPDATE x402_settlements SET transaction_hash = $6,
           lease_until = now() + make_interval(secs => $7::double precision / 1000)
         WHERE ${KEY} AND fence = $5 AND transaction_hash IS NULL AND outcome IS NULL RETURNING nonce`,
        [...keyParams(key), fence, hash, leaseMs],
      );
      return rows.length === 1;
    },
    /**
     * Extends the lease of a claim still waiting to submit (for the relayer's lock), while it is the caller's:
     * a settle that is alive is never taken over. False when it is no longer the caller's.
     */
    async renewLease(key: AuthorizationKey, fence: number, leaseMs: number): Promise<boolean> {
      const rows = await db.query<{ nonce: string }>(
        `UPDATE x402_settlements SET lease_until = now() + make_interval(secs => $6::double precision / 1000)
         WHERE ${KEY} AND fence = $5 AND transaction_hash IS NULL AND outcome IS NULL RETURNING nonce`,
        [...keyParams(key), fence, leaseMs],
      );
      return rows.length === 1;
    },
    /**
     * Takes over an in-flight claim whose lease ran out (its replica went quiet after sending), to read its
     * receipt; false when another settle took it first or it is finished.
     */
    async takeLease(key: AuthorizationKey, leaseMs: number): Promise<boolean> {
      const rows = await db.query<{ nonce: string }>(
        `UPDATE x402_settlements SET lease_until = now() + make_interval(secs => $5::double precision / 1000)
         WHERE ${KEY} AND outcome IS NULL AND lease_until < now() RETURNING nonce`,
        [...keyParams(key), leaseMs],
      );
      return rows.length === 1;
    },
    /**
     * Gives up the lease of an in-flight claim whose receipt did not come in time: the next settle of the
     * authorization takes it (takeLease) and reads the receipt, rather than waiting for a lease nobody uses.
     */
    async releaseLease(key: AuthorizationKey): Promise<void> {
      await db.query(
        `UPDATE x402_settlements SET lease_until = now() - interval '1 millisecond'
         WHERE ${KEY} AND outcome IS NULL AND lease_until > now()`,
        keyParams(key),
      );
    },
    /** The outcome every later settle of the authorization answers; written once. */
    async finish(key: AuthorizationKey, outcome: SettleResponse, transactionId: string | null): Promise<void> {
      await db.query(
        `UPDATE x402_settlements SET outcome = $5, transaction_id = $6, settled_at = now()
         WHERE ${KEY} AND outcome IS NULL`,
        [...keyParams(key), JSON.stringify(outcome), transactionId],
      );
    },
    /**
     * Gives a claim up when nothing was submitted (refused before broadcasting): the authorization may be
     * settled later. Only the caller's claim (its fencing token): never one another settle took over.
     */
    async release(key: AuthorizationKey, fence: number): Promise<void> {
      await db.query(`DELETE FROM x402_settlements WHERE ${KEY} AND fence = $5 AND outcome IS NULL`, [
        ...keyParams(key),
        fence,
      ]);
    },
    /** Claims of an app in the last `ms` (the settlements-per-minute limit). */
    async recentClaims(appId: string, ms: number): Promise<number> {
      const [row] = await db.query<{ n: string | number }>(
        `SELECT count(*) AS n FROM x402_settlements
         WHERE app_id = $1 AND claimed_at > now() - make_interval(secs => $2::double precision / 1000)`,
        [appId, ms],
      );
      return Number(row.n);
    },
  };
}
export type SettlementStore = ReturnType<typeof settlementStore>;
