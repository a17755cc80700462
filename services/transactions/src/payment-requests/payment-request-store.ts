import { preparedStatement, type Queryable } from '@attest/common';
import type { PaymentRequestStatus } from '../kernel/events';
import { listParams, listSql, type ListQuery } from '../kernel/list-query';
import { paymentPolicyStore, percent } from './payment-policy-store';
import { requestPaymentsStore } from './request-payments-store';
import { type AcceptedToken, type NewPaymentRequest, type PaymentRequest } from './payment-request-types';

interface Row {
  id: string;
  app_id: string;
  reference: string;
  status: PaymentRequestStatus;
  status_reason: string | null;
  status_detail: string | null;
  chain: string;
  token: string | null;
  to_address: string;
  amount_due: string | null;
  amount_paid: string;
  amount_refunded: string;
  fiat_amount: string | null;
  fiat_currency: string | null;
  price_amount: string | null;
  price_decimals: number | null;
  price_observed_at: Date | null;
  price_source: string | null;
  expires_in_seconds: number;
  expires_at: Date;
  expired_at: Date | null;
  canceled_at: Date | null;
  return_url: string | null;
  metadata: string | null;
  underpayment_tolerance_percent: string;
  flag_overpayment: boolean;
  created_at: Date;
  updated_at: Date;
}

interface TokenRow {
  payment_request_id: string;
  token: string;
  amount_due: string;
  price_amount: string | null;
  price_decimals: number | null;
  price_observed_at: Date | null;
  price_source: string | null;
}

/** What the database decides of a request it inserted (the rest is what was given). */
interface Decided {
  id: string;
  expires_in_seconds: number;
  expires_at_ms: number;
  underpayment_tolerance_percent: string;
  flag_overpayment: boolean;
  created_at_ms: number;
}

const toAccepted = (t: Omit<TokenRow, 'payment_request_id'>): AcceptedToken => ({
  token: t.token,
  amountDue: String(t.amount_due),
  price:
    t.price_amount && t.price_decimals !== null && t.price_observed_at
      ? {
          amount: t.price_amount,
          decimals: t.price_decimals,
          observedAt: t.price_observed_at,
          source: t.price_source ?? '',
        }
      : null,
});

const toRequest = (r: Row, accepted: AcceptedToken[]): PaymentRequest => ({
  id: r.id,
  appId: r.app_id,
  reference: r.reference,
  status: r.status,
  statusReason: r.status_reason,
  statusDetail: r.status_detail,
  chain: r.chain,
  token: r.token,
  to: r.to_address,
  amountDue: r.amount_due === null ? null : String(r.amount_due),
  amountPaid: String(r.amount_paid),
  amountRefunded: String(r.amount_refunded),
  fiat: r.fiat_amount && r.fiat_currency ? { amount: r.fiat_amount, currency: r.fiat_currency } : null,
  accepted,
  expiresInSeconds: r.expires_in_seconds,
  expiresAt: r.expires_at,
  expiredAt: r.expired_at,
  canceledAt: r.canceled_at,
  returnUrl: r.return_url,
  metadata: r.metadata,
  policy: {
    underpaymentTolerancePercent: percent(r.underpayment_tolerance_percent),
    flagOverpayment: r.flag_overpayment,
  },
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The requests of `rows` with their accepted tokens (one query for all of them). */
async function withTokens(db: Queryable, rows: Row[]): Promise<PaymentRequest[]> {
  if (rows.length === 0) return [];
  const tokens = await db.query<TokenRow>(
    preparedStatement(`SELECT payment_request_id, token, amount_due, price_amount, price_decimals, price_observed_at, price_source
     FROM payment_request_tokens WHERE payment_request_id = ANY($1::text[]) ORDER BY payment_request_id, position`),
    [rows.map((r) => r.id)],
  );
  const byRequest = new Map<string, AcceptedToken[]>();
  for (const t of tokens) {
    const list = byRequest.get(t.payment_request_id) ?? [];
    list.push(toAccepted(t));
    byRequest.set(t.payment_request_id, list);
  }
  return rows.map((r) => toRequest(r, byRequest.get(r.id) ?? []));
}

export function paymentRequestStore(db: Queryable) {
  return {
    ...paymentPolicyStore(db),
    ...requestPaymentsStore(db),
    /**
     * Inserts the requests (one statement for any number: the creations written together), each with its
     * accepted tokens in the app's order (position); the stored ones by id. One left out was not inserted:
     * its app already used the reference (or an earlier one of `requests` did). The app's amount policy is
     * copied into each request; a request that accepts one token is settled in it from the start.
     */
    async insertAll(requests: readonly NewPaymentRequest[]): Promise<Map<string, PaymentRequest>> {
      const only = (r: NewPaymentRequest) => (r.accepted.length === 1 ? r.accepted[0] : null);
      const tokens = requests.flatMap((r) => r.accepted.map((t, position) => ({ id: r.id, position, ...t })));
      // only what the database decides comes back (the times, the expiry, the policy copied in): the rest
      // is what was given, and reading every column and token back cost more than the inserts (bench/README.md)
      const rows = await db.query<Decided>(
        // each column an array, so the text is the same for any number of requests (a prepared statement)
        preparedStatement(`WITH input AS (
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::numeric[],
               $8::text[], $9::text[], $10::text[], $11::integer[], $12::timestamptz[], $13::text[], $14::integer[],
               $15::text[], $16::text[])
             WITH ORDINALITY AS i(id, app_id, reference, chain, token, to_address, amount_due, fiat_amount,
               fiat_currency, price_amount, price_decimals, price_observed_at, price_source, expires_in, metadata,
               return_url, n)),
         request AS (
           INSERT INTO payment_requests (id, app_id, reference, status, chain, token, to_address, amount_due,
             fiat_amount, fiat_currency, price_amount, price_decimals, price_observed_at, price_source,
             expires_in_seconds, expires_at, metadata, underpayment_tolerance_percent, flag_overpayment, return_url)
           SELECT i.id, i.app_id, i.reference, 'pending', i.chain, i.token, i.to_address, i.amount_due, i.fiat_amount,
             i.fiat_currency, i.price_amount, i.price_decimals, i.price_observed_at, i.price_source,
             COALESCE(i.expires_in, p.default_expires_in_seconds, 900),
             make_interval(secs => COALESCE(i.expires_in, p.default_expires_in_seconds, 900)) + now(), i.metadata,
             COALESCE(p.underpayment_tolerance_percent, 0), COALESCE(p.flag_overpayment, true), i.return_url
           FROM input i LEFT JOIN payment_amount_policies p ON p.app_id = i.app_id
           ORDER BY i.n
           ON CONFLICT DO NOTHING
           RETURNING id, expires_in_seconds, expires_at, underpayment_tolerance_percent, flag_overpayment, created_at),
         tokens AS (
           INSERT INTO payment_request_tokens (payment_request_id, token, position, amount_due, price_amount,
             price_decimals, price_observed_at, price_source)
           SELECT t.request_id, t.token, t.position, t.amount_due, t.price_amount, t.price_decimals, t.price_observed_at,
             t.price_source
           FROM unnest($17::text[], $18::text[], $19::integer[], $20::numeric[], $21::text[], $22::integer[],
               $23::timestamptz[], $24::text[])
             AS t(request_id, token, position, amount_due, price_amount, price_decimals, price_observed_at, price_source)
           JOIN request ON request.id = t.request_id)
         SELECT id, expires_in_seconds, floor(extract(epoch FROM expires_at) * 1000)::float8 AS expires_at_ms,
           underpayment_tolerance_percent::text, flag_overpayment, floor(extract(epoch FROM created_at) * 1000)::float8 AS created_at_ms
         FROM request`),
        [
          requests.map((r) => r.id),
          requests.map((r) => r.appId),
          requests.map((r) => r.reference),
          requests.map((r) => r.chain),
          requests.map((r) => only(r)?.token ?? null),
          requests.map((r) => r.to),
          requests.map((r) => only(r)?.amountDue ?? null),
          requests.map((r) => r.fiat?.amount ?? null),
          requests.map((r) => r.fiat?.currency ?? null),
          requests.map((r) => only(r)?.price?.amount ?? null),
          requests.map((r) => only(r)?.price?.decimals ?? null),
          requests.map((r) => only(r)?.price?.observedAt ?? null),
          requests.map((r) => only(r)?.price?.source ?? null),
          requests.map((r) => r.expiresInSeconds),
          requests.map((r) => r.metadata),
          requests.map((r) => r.returnUrl),
          tokens.map((t) => t.id),
          tokens.map((t) => t.token),
          tokens.map((t) => t.position),
          tokens.map((t) => t.amountDue),
          tokens.map((t) => t.price?.amount ?? null),
          tokens.map((t) => t.price?.decimals ?? null),
          tokens.map((t) => t.price?.observedAt ?? null),
          tokens.map((t) => t.price?.source ?? null),
        ],
      );
      const given = new Map(requests.map((r) => [r.id, r]));
      const stored = new Map<string, PaymentRequest>();
      for (const d of rows) {
        const r = given.get(d.id)!;
        const one = only(r);
        const createdAt = new Date(d.created_at_ms);
        stored.set(
          r.id,
          toRequest(
            {
              id: r.id,
              app_id: r.appId,
              reference: r.reference,
              status: 'pending',
              status_reason: null,
              status_detail: null,
              chain: r.chain,
              token: one?.token ?? null,
              to_address: r.to,
              amount_due: one?.amountDue ?? null,
              amount_paid: '0',
              amount_refunded: '0',
              fiat_amount: r.fiat?.amount ?? null,
              fiat_currency: r.fiat?.currency ?? null,
              price_amount: one?.price?.amount ?? null,
              price_decimals: one?.price?.decimals ?? null,
              price_observed_at: one?.price?.observedAt ?? null,
              price_source: one?.price?.source ?? null,
              expires_in_seconds: d.expires_in_seconds,
              expires_at: new Date(d.expires_at_ms),
              expired_at: null,
              canceled_at: null,
              return_url: r.returnUrl,
              metadata: r.metadata,
              underpayment_tolerance_percent: d.underpayment_tolerance_percent,
              flag_overpayment: d.flag_overpayment,
              created_at: createdAt,
              updated_at: createdAt,
            },
            // the tokens as given, in the app's order (as a read loads them)
            r.accepted.map((t) => ({ token: t.token, amountDue: t.amountDue, price: t.price })),
          ),
        );
      }
      return stored;
    },
    async find(id: string): Promise<PaymentRequest | null> {
      const rows = await db.query<Row>(preparedStatement('SELECT * FROM payment_requests WHERE id = $1'), [id]);
      return (await withTokens(db, rows))[0] ?? null;
    },
    /** Locks the request's row for the caller's transaction (nothing read). */
    async lock(id: string): Promise<void> {
      await db.query('SELECT 1 FROM payment_requests WHERE id = $1 FOR UPDATE', [id]);
    },
    async findForUpdate(id: string): Promise<PaymentRequest | null> {
      const rows = await db.query<Row>('SELECT * FROM payment_requests WHERE id = $1 FOR UPDATE', [id]);
      return (await withTokens(db, rows))[0] ?? null;
    },
    async findByReference(appId: string, reference: string): Promise<PaymentRequest | null> {
      const rows = await db.query<Row>(
        preparedStatement('SELECT * FROM payment_requests WHERE app_id = $1 AND reference = $2'),
        [appId, reference],
      );
      return (await withTokens(db, rows))[0] ?? null;
    },
    /**
     * A payment in `token` is recorded for the request: the request is settled in that token from now on
     * (its amount due and price those of that accepted token). One statement under the request's row lock,
     * so payments recorded at once in two tokens cannot both pass. The token the request is settled in
     * when it is another one, or null (taken, or the request's token already).
     */
    async takeToken(id: string, token: string): Promise<{ settledIn: string | null } | null> {
      const [taken] = await db.query<{ id: string }>(
        `UPDATE payment_requests r SET token = a.token, amount_due = a.amount_due, price_amount = a.price_amount,
           price_decimals = a.price_decimals, price_observed_at = a.price_observed_at, price_source = a.price_source,
           updated_at = CASE WHEN r.token IS NULL THEN now() ELSE r.updated_at END
         FROM payment_request_tokens a
         WHERE r.id = $1 AND a.payment_request_id = r.id AND a.token = $2 AND (r.token IS NULL OR r.token = $2)
         RETURNING r.id`,
        [id, token],
      );
      if (taken) return null;
      const [row] = await db.query<{ token: string | null }>('SELECT token FROM payment_requests WHERE id = $1', [id]);
      return { settledIn: row?.token ?? null };
    },
    /** A request that accepts several tokens and whose payments all failed: open to any of them again. */
    async releaseToken(id: string): Promise<void> {
      await db.query(
        `UPDATE payment_requests SET token = NULL, amount_due = NULL, price_amount = NULL, price_decimals = NULL,
           price_observed_at = NULL, price_source = NULL
         WHERE id = $1 AND (SELECT count(*) FROM payment_request_tokens WHERE payment_request_id = $1) > 1`,
        [id],
      );
    },
    /**
     * The new state; the caller writes its event in the same transaction. The first `expired` notes when
     * (expired_at, the database's clock): the expiry is decided once.
     */
    async setState(
      id: string,
      status: PaymentRequestStatus,
      reason: { code: string; detail: string } | null,
      amountPaid: string,
    ): Promise<PaymentRequest> {
      const [row] = await db.query<Row>(
        `UPDATE payment_requests SET status = $2, status_reason = $3, status_detail = $4, amount_paid = $5, updated_at = now(),
           expired_at = CASE WHEN $2 = 'expired' THEN COALESCE(expired_at, now()) ELSE expired_at END,
           canceled_at = CASE WHEN $2 = 'canceled' THEN COALESCE(canceled_at, now()) ELSE canceled_at END
         WHERE id = $1 RETURNING *`,
        [id, status, reason?.code ?? null, reason?.detail ?? null, amountPaid],
      );
      return (await withTokens(db, [row]))[0];
    },
    /** Pending requests past their expiry, locked for this transaction (SKIP LOCKED: replicas share the work). */
    async dueForExpiry(limit: number): Promise<PaymentRequest[]> {
      const rows = await db.query<Row>(
        `SELECT * FROM payment_requests WHERE status = 'pending' AND expires_at <= now()
         ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      return withTokens(db, rows);
    },
    /** An app's requests, oldest first from `since`, after the cursor. */
    async list(q: ListQuery): Promise<PaymentRequest[]> {
      const rows = await db.query<Row>(listSql('payment_requests'), listParams(q));
      return withTokens(db, rows);
    },
    /**
     * The requests of `appId` (the app that receives at the recipient) a transfer nobody recorded may pay: for its chain and recipient, settled in its token or
     * accepting it while not settled in any, not paid yet
     * (pending, detected, underpaid, failed, expired, canceled: its payment is flagged), created before its block (to the second: block
     * times have no fraction), oldest first; at most 1,000. Locked for the caller's transaction, so two
     * transfers attached at once on two replicas never both pick the one request owed their amount.
     */
    async openFor(
      t: { chain: string; token: string; to: string; blockTime: Date },
      appId: string,
    ): Promise<PaymentRequest[]> {
      const rows = await db.query<Row>(
        `SELECT * FROM payment_requests r
         WHERE chain = $1 AND lower(to_address) = $2 AND app_id = $5
           AND (token = $3 OR (token IS NULL AND EXISTS (
             SELECT 1 FROM payment_request_tokens a WHERE a.payment_request_id = r.id AND a.token = $3)))
           AND status IN ('pending', 'detected', 'underpaid', 'failed', 'expired', 'canceled')
           AND created_at < $4::timestamptz + interval '1 second'
           AND NOT EXISTS (SELECT 1 FROM transactions p WHERE p.payment_request_id = r.id AND p.status = 'pending')
         ORDER BY created_at, id LIMIT 1000 FOR UPDATE`,
        [t.chain, t.to.toLowerCase(), t.token, t.blockTime, appId],
      );
      return withTokens(db, rows);
    },
    /** The chain's head as the watcher last saw it, or null. */
    async chainHead(chain: string): Promise<bigint | null> {
      const [row] = await db.query<{ block_number: string }>('SELECT block_number FROM chain_heads WHERE chain = $1', [
        chain,
      ]);
      return row ? BigInt(row.block_number) : null;
    },
  };
}
export type PaymentRequestStore = ReturnType<typeof paymentRequestStore>;
