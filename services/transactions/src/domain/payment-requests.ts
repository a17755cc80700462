import { randomBytes } from 'node:crypto';
import {
  errors,
  LocalCache,
  type AuditActor,
  type AuditLog,
  type Db,
  type InvalidationBus,
  type Queryable,
} from '@attest/common';
import {
  paymentRequestStore,
  type AmountPolicy,
  type ListCursor,
  type ListQuery,
  type NewPaymentRequest,
  type PaymentRequest,
  type RequestPayment,
} from '../store/payment-request-store';
import type { Reason, Transaction } from '../store/transaction-store';
import { webhookStore } from '../store/webhook-store';
import type { PriceSource } from './price-quote';
import { tokenAmountFor } from './price-quote';
import { paymentRequestEvent, type PaymentRequestStatus } from './webhook-events';

export const PAYMENT_REQUEST_ID = /^pr_[0-9a-f]{32}$/;
export const newPaymentRequestId = () => `pr_${randomBytes(16).toString('hex')}`;

/** What the chain showed about a payment as it became final. */
export interface ObservedPayment {
  /** The amount the chain moved (6 decimals); undefined: the recorded token_amount (an operator's change). */
  amountReceived?: bigint;
  /** The time of the block that holds it. */
  blockTime?: Date;
}

/** The hooks TransactionService calls on a payment's changes. */
export interface PaymentSettlement {
  /**
   * Locks the request for `tx` before its payment is inserted: the chain watcher locks the requests a transfer
   * may pay before it inserts that transfer's payment, so both take their locks in the same order.
   */
  lock(tx: Queryable, requestId: string): Promise<void>;
  /**
   * A payment naming a request was inserted, in `tx`: the request is settled in its token from now on
   * (409 payment_token_mismatch when it is settled in another one; 400 when the request does not accept it).
   */
  recorded(tx: Queryable, requestId: string, token: string): Promise<void>;
  /** A payment became mined or failed: its request is settled again, in `tx`; the request's id, or null. */
  settled(tx: Queryable, t: Transaction, observed: ObservedPayment): Promise<string | null>;
  /**
   * The watcher saw a payment in a block that is not final yet; `movedFrom`: the block hash it was seen in
   * before, when a reorganisation moved it to this block.
   */
  detected(transactionId: string, blockNumber: bigint, movedFrom?: string): Promise<void>;
  /** A payment's block was reorganised away before it was final: its request goes back from detected to pending. */
  reorganised(transactionId: string, blockHash: string): Promise<void>;
  /** The open request a scanned transfer pays (see matchTransfer), read in `tx`. */
  matchTransfer(tx: Queryable, transfer: ScannedTransfer): Promise<TransferMatch>;
  /** After a commit that changed a request or one of its payments (recorded, settled, its block noted). */
  changed(requestId: string): Promise<void>;
  /** After the watcher noted a payment's block (or its leaving one): the request that payment names, if any. */
  blockNoted(transactionId: string): Promise<void>;
  /** After the watcher noted the chain's head. */
  headNoted(chain: string): Promise<void>;
}

/** A transfer the watcher scanned in a final block, as matching needs it (addresses lower case, amount in 6 decimals). */
export interface ScannedTransfer {
  chain: string;
  token: string;
  to: string;
  amount: bigint;
  blockTime: Date;
}

export type TransferMatch = { request: PaymentRequest } | { outcome: 'unmatched' | 'ambiguous'; candidates: number };

/**
 * The request a transfer that nobody recorded pays, among the open requests for its chain, token (settled in it,
 * or accepting it while settled in none) and
 * recipient that were created before its block (pending, detected, underpaid, failed with nothing
 * received, or expired): the only one; else, of those that are still owed exactly the transfer's amount,
 * the first not expired at the block's time, oldest first, then the oldest expired one; else none
 * (ambiguous: several, none owed this amount; or candidates of more than one app).
 */
export function pickRequest(candidates: PaymentRequest[], transfer: ScannedTransfer): TransferMatch {
  if (candidates.length === 0) return { outcome: 'unmatched', candidates: 0 };
  // an address named by the requests of several apps: no app's transfer is guessed onto another's request
  if (candidates.some((r) => r.appId !== candidates[0].appId))
    return { outcome: 'ambiguous', candidates: candidates.length };
  if (candidates.length === 1) return { request: candidates[0] };
  // a request accepting several tokens and settled in none yet is owed the transfer's token's amount
  const due = (r: PaymentRequest) => r.amountDue ?? r.accepted.find((a) => a.token === transfer.token)?.amountDue;
  const owed = (r: PaymentRequest) => BigInt(due(r) ?? 0) - BigInt(r.amountPaid);
  const exact = candidates
    .filter((r) => owed(r) === transfer.amount)
    .sort(
      (a, b) =>
        Number(a.expiresAt < transfer.blockTime) - Number(b.expiresAt < transfer.blockTime) ||
        a.createdAt.getTime() - b.createdAt.getTime() ||
        (a.id < b.id ? -1 : 1),
    );
  return exact.length > 0 ? { request: exact[0] } : { outcome: 'ambiguous', candidates: candidates.length };
}

/** A change the chain watcher made: the audit trail's actor. */
const WATCHER: AuditActor = { type: 'system', id: 'chain' };

/** A request and its view as the read cache keeps them (confirmations are computed on each read). */
interface CachedRequest {
  request: PaymentRequest;
  /** The view without confirmations, built once per load; never changed in place. */
  view: PaymentRequestView;
  /** Some payment is in a block: the view needs the chain head. */
  inBlock: boolean;
}

export interface PaymentRequestCacheOptions {
  /** Backstop for a missed invalidation of a request. */
  ttlMs: number;
  max: number;
  /**
   * How long a chain head read from the database is used. The watcher's new head drops it on every
   * replica through the bus; this bounds a missed message. A head older than the chain's only
   * under-states confirmations.
   */
  headTtlMs: number;
}

/** A block's confirmations at `head` (the block itself is 1); null when either is unknown or the head is behind it. */
const confirmations = (blockNumber: string | null, head: bigint | null): number | null =>
  blockNumber !== null && head !== null && head >= BigInt(blockNumber) ? Number(head - BigInt(blockNumber) + 1n) : null;

/** The view with each payment's confirmations at `head` (the view itself is kept as it is). */
function atHead(view: PaymentRequestView, head: bigint | null): PaymentRequestView {
  return {
    ...view,
    payments: view.payments.map((p) => ({ ...p, confirmations: confirmations(p.block_number, head) })),
  };
}

/** The answer of GET /api/v2/client/payment-requests/{id}, and the `data` of its events. */
export function requestView(r: PaymentRequest, payments: RequestPayment[], head: bigint | null) {
  const due = r.amountDue === null ? null : BigInt(r.amountDue);
  const paid = BigInt(r.amountPaid);
  const settledPrice = r.accepted.find((a) => a.token === r.token)?.price ?? null;
  return {
    id: r.id,
    reference: r.reference,
    status: r.status,
    reason: r.statusReason,
    reason_detail: r.statusDetail,
    chain: r.chain,
    token: r.token,
    accepted_tokens: r.accepted.map((a) => ({
      token: a.token,
      amount_due: a.amountDue,
      price: a.price
        ? {
            rate: { amount: a.price.amount, decimals: a.price.decimals },
            observed_at: a.price.observedAt.toISOString(),
            source: a.price.source,
          }
        : null,
    })),
    to: r.to,
    amount_due: r.amountDue,
    amount_paid: r.amountPaid,
    amount_remaining: due === null ? null : (due > paid ? due - paid : 0n).toString(),
    amount_over: (due !== null && paid > due ? paid - due : 0n).toString(),
    price: r.fiat
      ? {
          amount: r.fiat.amount,
          currency: r.fiat.currency,
          rate: settledPrice ? { amount: settledPrice.amount, decimals: settledPrice.decimals } : null,
          observed_at: settledPrice?.observedAt.toISOString() ?? null,
          source: settledPrice?.source ?? null,
        }
      : null,
    amount_policy: {
      underpayment_tolerance_percent: r.policy.underpaymentTolerancePercent,
      flag_overpayment: r.policy.flagOverpayment,
    },
    metadata: r.metadata === null ? null : (JSON.parse(r.metadata) as unknown),
    expires_at: r.expiresAt.toISOString(),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    payments: payments.map((p) => ({
      transaction_id: p.transactionId,
      reference: p.reference,
      transaction_hash: p.transactionHash,
      from: p.from,
      status: p.status,
      reason: p.statusReason,
      token_amount: p.tokenAmount,
      amount_received: p.amountReceived,
      block_number: p.blockNumber,
      block_time: p.blockTime?.toISOString() ?? null,
      confirmations: confirmations(p.blockNumber, head),
      late: p.blockTime !== null && p.blockTime > r.expiresAt,
      recorded_at: p.createdAt.toISOString(),
    })),
  };
}
export type PaymentRequestView = ReturnType<typeof requestView>;

/** The amounts in 6 decimals as a sentence: 1.5 of 2 USDCE. */
const units = (amount: bigint) => {
  const whole = amount / 1000000n;
  const fraction = (amount % 1000000n).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
};

/**
 * The state a request is in given its recorded payments and its amount policy: the sum of what the mined
 * ones received against amount_due. Reaching amount_due less the tolerance is paid (paid_over above it
 * when overpayments are flagged; paid_late when a counted payment's block came after the expiry); less is
 * underpaid. With nothing received: failed (the failed payment's reason) when a payment failed, else the
 * state stays (pending, detected or expired).
 */
export function settle(
  r: PaymentRequest,
  payments: RequestPayment[],
): { status: PaymentRequestStatus; reason: Reason | null; amountPaid: bigint } {
  const mined = payments.filter((p) => p.status === 'mined');
  const paid = mined.reduce((sum, p) => sum + BigInt(p.amountReceived ?? p.tokenAmount), 0n);
  if (paid === 0n || r.amountDue === null) {
    const failed = payments.filter((p) => p.status === 'failed');
    if (failed.length > 0 && failed.length === payments.length) {
      const last = failed[failed.length - 1];
      return {
        status: 'failed',
        reason: {
          code: last.statusReason ?? 'failed',
          detail: `The payment ${last.transactionHash ?? last.transactionId} failed (${last.statusReason ?? 'failed'}); nothing was received.`,
        },
        amountPaid: 0n,
      };
    }
    return {
      status: r.status,
      reason: r.statusReason ? { code: r.statusReason, detail: r.statusDetail ?? '' } : null,
      amountPaid: 0n,
    };
  }
  const due = BigInt(r.amountDue);
  const toleranceBasis = BigInt(Math.round(Number(r.policy.underpaymentTolerancePercent) * 100));
  const enough = (due * (10000n - toleranceBasis) + 9999n) / 10000n;
  const token = r.token ?? '';
  if (paid < enough)
    return {
      status: 'underpaid',
      reason: {
        code: 'underpaid',
        detail: `Received ${units(paid)} of ${units(due)} ${token} (${units(due - paid)} short); the underpayment tolerance of ${r.policy.underpaymentTolerancePercent} % needs at least ${units(enough)}.`,
      },
      amountPaid: paid,
    };
  const late = mined.find((p) => p.blockTime !== null && p.blockTime > r.expiresAt);
  if (late)
    return {
      status: 'paid_late',
      reason: {
        code: 'paid_after_expiry',
        detail: `Received ${units(paid)} of ${units(due)} ${token}; a payment's block (${late.blockTime!.toISOString()}) came after the request expired at ${r.expiresAt.toISOString()}.`,
      },
      amountPaid: paid,
    };
  if (paid > due)
    return r.policy.flagOverpayment
      ? {
          status: 'paid_over',
          reason: {
            code: 'overpaid',
            detail: `Received ${units(paid)} of ${units(due)} ${token} (${units(paid - due)} over).`,
          },
          amountPaid: paid,
        }
      : { status: 'paid', reason: null, amountPaid: paid };
  if (paid < due)
    return {
      status: 'paid',
      reason: {
        code: 'underpaid_within_tolerance',
        detail: `Received ${units(paid)} of ${units(due)} ${token} (${units(due - paid)} short), within the underpayment tolerance of ${r.policy.underpaymentTolerancePercent} %.`,
      },
      amountPaid: paid,
    };
  return { status: 'paid', reason: null, amountPaid: paid };
}

/** What an app asked for, in the body's terms: two creations of one reference must ask the same. */
interface Ask {
  chain: string;
  /** The accepted tokens, sorted (the order they are listed in does not make another request). */
  tokens: string;
  to: string;
  amount: string | null;
  currency: string | null;
  tokenAmount: string | null;
  expiresInSeconds: number;
  metadata: string | null;
}

const tokensKey = (tokens: string[]) => [...tokens].sort().join(',');

const askOf = (r: PaymentRequest): Ask => ({
  chain: r.chain,
  tokens: tokensKey(r.accepted.map((a) => a.token)),
  to: r.to,
  amount: r.fiat?.amount ?? null,
  currency: r.fiat?.currency ?? null,
  tokenAmount: r.fiat ? null : (r.accepted[0]?.amountDue ?? null),
  expiresInSeconds: r.expiresInSeconds,
  metadata: r.metadata,
});

/** The fields that make two creations of one reference the same request (the body's names). */
const SAME_REQUEST: [string, (a: Ask) => string | number | null][] = [
  ['chain', (a) => a.chain],
  ['accepted_tokens', (a) => a.tokens],
  ['to', (a) => a.to.toLowerCase()],
  ['amount', (a) => a.amount],
  ['currency', (a) => a.currency],
  ['token_amount', (a) => a.tokenAmount],
  ['expires_in', (a) => a.expiresInSeconds],
  ['metadata', (a) => a.metadata],
];

export type CreateRequest = Omit<NewPaymentRequest, 'id' | 'fiat' | 'accepted'> & {
  /** A price in a token (then `tokens` has that one token) or in a fiat currency. */
  price: { tokenAmount: bigint } | { amount: string; currency: string };
  /** The accepted tokens in the app's order, each with its decimals (CHAIN_TOKENS). */
  tokens: { token: string; decimals: number }[];
  /** The body's name for the tokens (token or accepted_tokens): a conflict names the field the app sent. */
  tokensField: 'token' | 'accepted_tokens';
};

/**
 * Payment requests: created with a fixed amount (a fiat price converted at a fresh rate), settled from
 * the payments recorded for them as the chain watcher decides those, expired by a sweep (and on read).
 * Every state change writes its payment_request.* event to the webhook outbox in its own transaction.
 */
export class PaymentRequestService implements PaymentSettlement {
  /** The requests read by GET, each with its payments; dropped here and on every replica on each change. */
  private readonly views: LocalCache<CachedRequest>;
  /** Each chain's head (a decimal string) as the watcher last noted it. */
  private readonly heads: LocalCache<string>;

  constructor(
    private readonly db: Db,
    private readonly prices: PriceSource,
    bus: InvalidationBus,
    options: { audit?: Pick<AuditLog, 'record'>; cache?: PaymentRequestCacheOptions } = {},
  ) {
    const cache = options.cache ?? { ttlMs: 60000, max: 20000, headTtlMs: 2000 };
    this.audit = options.audit;
    this.views = new LocalCache<CachedRequest>(bus, { name: 'payment-requests', ttlMs: cache.ttlMs, max: cache.max });
    this.heads = new LocalCache<string>(bus, { name: 'chain-heads', ttlMs: cache.headTtlMs, max: 64 });
  }

  private readonly audit?: Pick<AuditLog, 'record'>;

  private store = (db: Queryable = this.db) => paymentRequestStore(db);

  /** Writes the new state and its event (`payment_request.<status>`) in `tx`. */
  private async change(
    tx: Queryable,
    r: PaymentRequest,
    status: PaymentRequestStatus,
    reason: Reason | null,
    amountPaid: bigint,
  ) {
    const store = this.store(tx);
    const changed = await store.setState(r.id, status, reason, amountPaid.toString());
    const [payments, head] = await Promise.all([store.payments(r.id), store.chainHead(r.chain)]);
    await webhookStore(tx).addEvent(
      paymentRequestEvent(
        `payment_request.${status}`,
        changed,
        requestView(changed, payments, head),
        changed.updatedAt,
      ),
    );
    return changed;
  }

  /**
   * Creates once per (app, reference): the same creation again answers the stored request (`created`
   * false, no new price is fetched); one that differs is 409 reference_taken naming the field.
   */
  async create(input: CreateRequest, actor: AuditActor): Promise<{ request: PaymentRequest; created: boolean }> {
    const fiat = 'currency' in input.price ? input.price : null;
    const tokenPriced = 'tokenAmount' in input.price ? input.price.tokenAmount.toString() : null;
    const ask: Ask = {
      chain: input.chain,
      tokens: tokensKey(input.tokens.map((t) => t.token)),
      to: input.to,
      amount: fiat?.amount ?? null,
      currency: fiat?.currency ?? null,
      tokenAmount: tokenPriced,
      expiresInSeconds: input.expiresInSeconds,
      metadata: input.metadata,
    };
    const sameAs = (existing: PaymentRequest) => {
      const stored = askOf(existing);
      let field = SAME_REQUEST.find(([, value]) => value(stored) !== value(ask))?.[0];
      if (field === 'accepted_tokens') field = input.tokensField;
      if (field)
        throw errors.conflict(
          'reference_taken',
          `This app already created a payment request with reference ${JSON.stringify(input.reference)} and a different ${field}; use a new reference for a new order.`,
          field,
        );
      return { request: existing, created: false };
    };
    // the same creation again answers the stored request without asking for a new price
    const stored = await this.store().findByReference(input.appId, input.reference);
    if (stored) return sameAs(stored);
    const base = {
      id: newPaymentRequestId(),
      appId: input.appId,
      reference: input.reference,
      chain: input.chain,
      to: input.to,
      expiresInSeconds: input.expiresInSeconds,
      metadata: input.metadata,
    };
    let request: NewPaymentRequest;
    if (fiat) {
      // each accepted token's amount from its current price; any price that is not fresh refuses the request
      const quotes = await Promise.all(input.tokens.map((t) => this.prices.quote(t.token, fiat.currency)));
      request = {
        ...base,
        fiat: { amount: fiat.amount, currency: fiat.currency },
        accepted: input.tokens.map((t, i) => ({
          token: t.token,
          amountDue: tokenAmountFor(fiat.amount, quotes[i], t.decimals).toString(),
          price: {
            amount: quotes[i].amount,
            decimals: quotes[i].decimals,
            observedAt: quotes[i].observedAt,
            source: quotes[i].source,
          },
        })),
      };
    } else
      request = {
        ...base,
        fiat: null,
        accepted: input.tokens.map((t) => ({ token: t.token, amountDue: tokenPriced!, price: null })),
      };
    const created = await this.db.transaction(async (tx) => {
      const row = await this.store(tx).insert(request);
      if (!row) return null;
      await webhookStore(tx).addEvent(
        paymentRequestEvent('payment_request.created', row, requestView(row, [], null), row.createdAt),
      );
      await this.audit?.record(
        {
          type: 'payment_request.created',
          actor,
          subject: row.id,
          detail: {
            app_id: row.appId,
            reference: row.reference,
            accepted_tokens: row.accepted.map((a) => ({ token: a.token, amount_due: a.amountDue })),
          },
        },
        tx,
      );
      return row;
    });
    if (created) {
      await this.views.invalidate(created.id);
      return { request: created, created: true };
    }
    // another creation of the same reference committed first
    const winner = await this.store().findByReference(input.appId, input.reference);
    if (!winner) throw new Error('payment request insert conflicted but no request holds the reference');
    return sameAs(winner);
  }

  /** The app's request with its payments; a pending one past its expiry is expired now (the sweep may not have run yet). */
  async get(appId: string, id: string): Promise<PaymentRequestView | null> {
    let cached = await this.cached(id);
    if (!cached || cached.request.appId !== appId) return null;
    if (cached.request.status === 'pending' && cached.request.expiresAt.getTime() <= Date.now()) {
      await this.expire(id);
      cached = (await this.cached(id)) ?? cached;
    }
    return cached.inBlock ? atHead(cached.view, await this.head(cached.request.chain)) : cached.view;
  }

  /** The request with its payments, from memory once warm (unknown ids too). */
  private cached(id: string): Promise<CachedRequest | null> {
    return this.views.get(id, async () => {
      const store = this.store();
      const request = await store.find(id);
      if (!request) return null;
      const payments = await store.payments(id);
      return {
        request,
        view: requestView(request, payments, null),
        inBlock: payments.some((p) => p.blockNumber !== null),
      };
    });
  }

  /** The chain's head as last noted, from memory for at most headTtlMs (or until the watcher notes a new one). */
  private async head(chain: string): Promise<bigint | null> {
    const head = await this.heads.get(chain, async () => (await this.store().chainHead(chain))?.toString() ?? null);
    return head === null ? null : BigInt(head);
  }

  async changed(requestId: string): Promise<void> {
    await this.views.invalidate(requestId);
  }

  async blockNoted(transactionId: string): Promise<void> {
    const requestId = await this.store().requestOfTransaction(transactionId);
    if (requestId) await this.views.invalidate(requestId);
  }

  async headNoted(chain: string): Promise<void> {
    await this.heads.invalidate(chain);
  }

  /** The request a payment may be recorded for; 404 when it is not this app's. */
  async forPayment(appId: string, id: string): Promise<PaymentRequest> {
    const r = await this.store().find(id);
    if (!r || r.appId !== appId)
      throw errors.notFound('No payment request with this payment_request_id for this app.', 'payment_request_id');
    return r;
  }

  async list(q: ListQuery): Promise<{ items: PaymentRequestView[]; next: ListCursor | null }> {
    const rows = await this.store().list({ ...q, limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    const store = this.store();
    const heads = new Map<string, bigint | null>();
    const items: PaymentRequestView[] = [];
    for (const r of page) {
      if (!heads.has(r.chain)) heads.set(r.chain, await store.chainHead(r.chain));
      items.push(requestView(r, await store.payments(r.id), heads.get(r.chain) ?? null));
    }
    const last = page[page.length - 1];
    return { items, next: rows.length > q.limit && last ? last.id : null };
  }

  async settled(tx: Queryable, t: Transaction, observed: ObservedPayment): Promise<string | null> {
    const store = this.store(tx);
    const requestId = await store.requestOfTransaction(t.id);
    if (!requestId) return null;
    if (t.status === 'mined')
      await store.notePaymentReceived(t.id, observed.amountReceived?.toString() ?? null, observed.blockTime ?? null);
    let r = await store.findForUpdate(requestId);
    if (!r) return requestId;
    const payments = await store.payments(requestId);
    // every payment failed: a request that accepts several tokens may be paid in any of them again
    if (r.token !== null && r.accepted.length > 1 && payments.every((p) => p.status === 'failed')) {
      await store.releaseToken(requestId);
      r = (await store.findForUpdate(requestId))!;
    }
    const next = settle(r, payments);
    if (
      next.status !== r.status ||
      next.amountPaid.toString() !== r.amountPaid ||
      next.reason?.code !== (r.statusReason ?? undefined)
    )
      await this.change(tx, r, next.status, next.reason, next.amountPaid);
    return requestId;
  }

  async lock(tx: Queryable, requestId: string): Promise<void> {
    await this.store(tx).lock(requestId);
  }

  async recorded(tx: Queryable, requestId: string, token: string): Promise<void> {
    const refused = await this.store(tx).takeToken(requestId, token);
    if (!refused) return;
    if (refused.settledIn === null || refused.settledIn === token)
      throw errors.invalidParameter('token', `token must be one of the payment request's accepted tokens.`);
    throw errors.conflict(
      'payment_token_mismatch',
      `Payment request ${requestId} is being paid in ${refused.settledIn}; every payment toward it must be in ${refused.settledIn}.`,
      'token',
    );
  }

  /**
   * pending (or expired, or failed with nothing received) → detected. A payment moved to another block by a
   * reorganisation (`movedFrom`) detects its request again in the new block, with a new event and an
   * audit record, when it is still detected.
   */
  async detected(transactionId: string, blockNumber: bigint, movedFrom?: string): Promise<void> {
    const requestId = await this.store().requestOfTransaction(transactionId);
    if (!requestId) return;
    await this.db.transaction(async (tx) => {
      const r = await this.store(tx).findForUpdate(requestId);
      const from = movedFrom ? ['pending', 'expired', 'failed', 'detected'] : ['pending', 'expired', 'failed'];
      if (!r || !from.includes(r.status)) return;
      const detail = movedFrom
        ? `A payment moved to block ${blockNumber} after its block ${movedFrom} was reorganised away; not final yet.`
        : `A payment is in block ${blockNumber}, not final yet.`;
      await this.change(tx, r, 'detected', { code: 'in_block', detail }, BigInt(r.amountPaid));
      if (movedFrom)
        await this.auditReorganised(tx, r, {
          transaction_id: transactionId,
          from: r.status,
          to: 'detected',
          left_block: movedFrom,
          block_number: blockNumber.toString(),
        });
    });
    await this.views.invalidate(requestId);
  }

  /**
   * detected → pending, or expired once past its expiry (reason `reorganised`, event payment_request.pending
   * or .expired, audit record) when the block of
   * a payment was reorganised away and no other payment of the request is in a block still. Nothing was
   * counted from a block that is not final, so the amounts stay.
   */
  async reorganised(transactionId: string, blockHash: string): Promise<void> {
    const requestId = await this.store().requestOfTransaction(transactionId);
    if (!requestId) return;
    const changed = await this.db.transaction(async (tx) => {
      const store = this.store(tx);
      const r = await store.findForUpdate(requestId);
      if (!r || r.status !== 'detected') return false;
      const payments = await store.payments(requestId);
      if (payments.some((p) => p.status === 'pending' && p.blockNumber !== null)) return false;
      const payment = payments.find((p) => p.transactionId === transactionId);
      // back to what it was before the payment was seen: expired once past its expiry, else pending
      const back = r.expiresAt.getTime() <= Date.now() ? 'expired' : 'pending';
      await this.change(
        tx,
        r,
        back,
        {
          code: 'reorganised',
          detail: `The block ${blockHash} that held the payment ${payment?.transactionHash ?? transactionId} was reorganised away; waiting for the chain to include it again.`,
        },
        BigInt(r.amountPaid),
      );
      await this.auditReorganised(tx, r, {
        transaction_id: transactionId,
        from: 'detected',
        to: back,
        left_block: blockHash,
      });
      return true;
    });
    if (changed) await this.views.invalidate(requestId);
  }

  /** The audit record of a request a reorganisation changed, by the chain watcher. */
  private async auditReorganised(tx: Queryable, r: PaymentRequest, detail: Record<string, string>): Promise<void> {
    await this.audit?.record(
      { type: 'payment_request.reorganised', actor: WATCHER, subject: r.id, detail: { app_id: r.appId, ...detail } },
      tx,
    );
  }

  async matchTransfer(tx: Queryable, transfer: ScannedTransfer): Promise<TransferMatch> {
    return pickRequest(await this.store(tx).openFor(transfer), transfer);
  }

  /** Expires one request if it is still pending and past its expiry; the expired request, or null. */
  private async expire(id: string): Promise<PaymentRequest | null> {
    const expired = await this.db.transaction(async (tx) => {
      const r = await this.store(tx).findForUpdate(id);
      if (!r || r.status !== 'pending' || r.expiresAt.getTime() > Date.now()) return null;
      return this.expireIn(tx, r);
    });
    if (expired) await this.views.invalidate(id);
    return expired;
  }

  private expireIn(tx: Queryable, r: PaymentRequest) {
    return this.change(
      tx,
      r,
      'expired',
      { code: 'expired', detail: `Nothing was received by ${r.expiresAt.toISOString()}.` },
      BigInt(r.amountPaid),
    );
  }

  /** One sweep: expires up to `limit` pending requests past their expiry; true when there may be more. */
  async expireDue(limit = 100): Promise<boolean> {
    const due = await this.db.transaction(async (tx) => {
      const rows = await this.store(tx).dueForExpiry(limit);
      for (const r of rows) await this.expireIn(tx, r);
      return rows;
    });
    await Promise.all(due.map((r) => this.views.invalidate(r.id)));
    return due.length === limit;
  }

  policy(appId: string): Promise<AmountPolicy> {
    return this.store().policy(appId);
  }

  async setPolicy(appId: string, policy: AmountPolicy, actor: AuditActor): Promise<AmountPolicy> {
    return this.db.transaction(async (tx) => {
      const set = await this.store(tx).setPolicy(appId, policy);
      await this.audit?.record(
        {
          type: 'payment_policy.changed',
          actor,
          subject: appId,
          detail: {
            underpayment_tolerance_percent: set.underpaymentTolerancePercent,
            flag_overpayment: set.flagOverpayment,
          },
        },
        tx,
      );
      return set;
    });
  }
}
