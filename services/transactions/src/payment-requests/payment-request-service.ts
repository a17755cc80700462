import {
  errors,
  LocalCache,
  type AuditActor,
  type AuditLog,
  type Db,
  type InvalidationBus,
  type Queryable,
} from '@attest/common';
import type { OutboxWrite, PaymentRequestStatus } from '../kernel/events';
import type { ListCursor, ListQuery } from '../kernel/list-query';
import type { ObservedPayment, PaymentSettlement, ScannedTransfer } from '../kernel/settlement';
import type { Reason, Transaction } from '../kernel/transaction';
import { receivingAddressStore } from '../receiving-addresses';
import { writeEvent } from '../webhooks';
import type { CreateRequest } from './create-request';
import { cancelRequest } from './cancel-request';
import { changeState, type StateWriter } from './request-change';
import { paymentRequestStore } from './payment-request-store';
import { RequestCreations } from './request-creations';
import type { PaymentRequest } from './payment-request-types';
import { atHead, requestView, type PaymentRequestView, type RequestLinks } from './payment-request-view';
import { pickRequest, type TransferMatch } from './pick-request';
import type { PriceSource } from './price-quote';
import { settle } from './settle';
import { refundsOf } from './refund-store';

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
    prices: PriceSource,
    bus: InvalidationBus,
    options: {
      audit?: Pick<AuditLog, 'record'>;
      cache?: PaymentRequestCacheOptions;
      /** Where each change's payment_request.* event is written, in the change's own database transaction. */
      outbox?: OutboxWrite;
      /** The page and EIP-681 URIs each request's JSON carries (the checkout page feature's). */
      links?: RequestLinks;
    } = {},
  ) {
    const cache = options.cache ?? { ttlMs: 60000, max: 20000, headTtlMs: 2000 };
    this.audit = options.audit;
    this.outbox = options.outbox ?? writeEvent;
    this.writer = { outbox: this.outbox, links: options.links };
    this.views = new LocalCache<CachedRequest>(bus, { name: 'payment-requests', ttlMs: cache.ttlMs, max: cache.max });
    this.heads = new LocalCache<string>(bus, { name: 'chain-heads', ttlMs: cache.headTtlMs, max: 64 });
    this.creations = new RequestCreations(db, prices, {
      audit: this.audit,
      outbox: this.outbox,
      links: options.links,
      written: (id) => this.views.invalidate(id),
    });
  }

  /** The creations of this process, written together when they arrive together. */
  private readonly creations: RequestCreations;

  private readonly audit?: Pick<AuditLog, 'record'>;
  private readonly outbox: OutboxWrite;
  private readonly writer: StateWriter;
  private store = (db: Queryable = this.db) => paymentRequestStore(db);

  /** Writes the new state and its event (`payment_request.<status>`) in `tx`. */
  private change(
    tx: Queryable,
    r: PaymentRequest,
    status: PaymentRequestStatus,
    reason: Reason | null,
    amountPaid: bigint,
  ) {
    return changeState(tx, this.writer, r, status, reason, amountPaid);
  }

  /**
   * Creates once per (app, reference): the same creation again answers the stored request (`created`
   * false); one that differs is 409 reference_taken naming the field (RequestCreations).
   */
  create(
    input: CreateRequest,
    actor: AuditActor,
  ): Promise<{ request: PaymentRequest; created: boolean; view?: PaymentRequestView }> {
    return this.creations.create(input, actor);
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

  /** Any app's request by its (unguessable) id, as get answers it: the customer's page. */
  async read(id: string): Promise<{ appId: string; view: PaymentRequestView } | null> {
    const appId = (await this.cached(id))?.request.appId;
    const view = appId === undefined ? null : await this.get(appId, id);
    return appId === undefined || !view ? null : { appId, view };
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
        view: requestView(request, payments, null, this.writer.links, await refundsOf(this.db, request)),
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
      const [payments, refunds] = [await store.payments(r.id), await refundsOf(this.db, r)];
      items.push(requestView(r, payments, heads.get(r.chain) ?? null, this.writer.links, refunds));
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

  /**
   * The request a transfer nobody recorded pays (pickRequest), among the open requests of the app whose receiving
   * address its recipient is: another app's request naming that address is never considered.
   */
  async matchTransfer(tx: Queryable, transfer: ScannedTransfer): Promise<TransferMatch> {
    const owner = await receivingAddressStore(tx).ownerOf(transfer.chain.toLowerCase(), transfer.to.toLowerCase());
    if (owner === null) return { outcome: 'unmatched', candidates: 0 };
    return pickRequest(await this.store(tx).openFor(transfer, owner), transfer);
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

  /** Cancels the app's pending request (404 when not the app's, 409 payment_request_not_open otherwise). */
  async cancel(appId: string, id: string, actor: AuditActor): Promise<PaymentRequestView> {
    await this.db.transaction((tx) => cancelRequest(tx, this.writer, this.audit, { appId, id, actor }));
    await this.views.invalidate(id);
    return (await this.get(appId, id))!;
  }
}
