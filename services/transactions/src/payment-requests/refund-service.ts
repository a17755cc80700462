import { randomBytes } from 'node:crypto';
import { AppError, errors, type AuditActor, type AuditLog, type Db, type Queryable } from '@attest/common';
import type { FinalTransactions, FinalTransferLog } from '../kernel/chain-transfer';
import type { OutboxWrite } from '../kernel/events';
import { receivingAddressStore } from '../receiving-addresses';
import { paymentRequestEvent } from './payment-request-events';
import { paymentRequestStore } from './payment-request-store';
import type { PaymentRequest, Refund } from './payment-request-types';
import { requestView, type RequestLinks } from './payment-request-view';
import { refundStore } from './refund-store';
import { refundView, type RefundView } from './refund-view';
import { refundedState } from './settle';

/** What the app sends: the transaction that refunded, and optionally its amount (6 decimals) and chain. */
export interface RefundInput {
  transactionHash: string;
  amount?: string;
  chain?: string;
}

/** The states a request may be refunded in: something was received and counted. */
const REFUNDABLE = ['paid', 'paid_over', 'paid_late', 'underpaid', 'partially_refunded'];

/** How long the app should wait before recording again a refund that is not final yet. */
const NOT_FINAL_RETRY_SECONDS = 15;

/** The transfer that refunds, with its final block. */
type Verified = FinalTransferLog & { blockNumber: bigint; blockTime: Date };

const refused = (status: number, code: string, detail: string, attribute: string) =>
  new AppError(code, status, detail, attribute);

export const newRefundId = () => `rf_${randomBytes(16).toString('hex')}`;

/**
 * Refunds the app sent and records: a final transfer of the request's token from one of the app's receiving
 * addresses to an address that paid it, verified on chain (the watcher's RPCs, finality and quorum) when it
 * is recorded, claiming its transaction once (as payments do). The request becomes partially_refunded, then
 * refunded once the refunds reach what was paid (payment_request.partially_refunded / .refunded events with
 * the refund in data.refund, and an audit record).
 */
export class RefundService {
  constructor(
    private readonly db: Db,
    private readonly options: {
      /** The chains whose final transactions can be read (none: refunds answer 503). */
      chains: readonly FinalTransactions[];
      outbox: OutboxWrite;
      links?: RequestLinks;
      audit?: Pick<AuditLog, 'record'>;
      /** After a commit that changed a request (its read cache, on every replica). */
      changed: (requestId: string) => Promise<void>;
    },
  ) {}

  private async request(appId: string, id: string, db: Queryable = this.db): Promise<PaymentRequest> {
    const r = await paymentRequestStore(db).find(id);
    if (!r || r.appId !== appId) throw errors.notFound('No payment request with this id for this app.', 'id');
    return r;
  }

  /** The app's request's refunds, oldest first, paged (404 when the request is not the app's). */
  async list(appId: string, id: string, page: { after?: string; limit: number }) {
    await this.request(appId, id);
    const rows = await refundStore(this.db).forRequest(id, { after: page.after, limit: page.limit + 1 });
    const items = rows.slice(0, page.limit);
    return { items: items.map(refundView), next: rows.length > page.limit ? items[items.length - 1].id : null };
  }

  /**
   * Records a refund: 201 with it (`created`), or the same refund recorded again (`created` false). Refused
   * with a status, a code and the field at fault (see refund.openapi.ts).
   */
  async refund(
    appId: string,
    id: string,
    input: RefundInput,
    actor: AuditActor,
  ): Promise<{ refund: RefundView; created: boolean }> {
    const hash = input.transactionHash.toLowerCase();
    const r = await this.request(appId, id);
    if (input.chain !== undefined && input.chain !== r.chain)
      throw refused(
        422,
        'refund_wrong_chain',
        `Payment request ${r.id} was paid on ${r.chain}, not on ${input.chain}.`,
        'chain',
      );
    const again = await refundStore(this.db).findByTransaction(r.chain, hash);
    if (again) {
      if (again.paymentRequestId !== r.id || (input.amount !== undefined && input.amount !== again.amount))
        throw claimed();
      return { refund: refundView(again), created: false };
    }
    refundable(r);
    const transfer = await this.verify(r, hash, input.amount);
    const refund = await this.db.transaction(async (tx) => this.insert(tx, r.id, hash, transfer, actor));
    await this.options.changed(r.id);
    return { refund: refundView(refund), created: true };
  }

  /** The transfer in `hash` that refunds the request, read on chain; refused with the reason otherwise. */
  private async verify(r: PaymentRequest, hash: string, amount: string | undefined): Promise<Verified> {
    const chain = this.options.chains.find((c) => c.chain === r.chain);
    if (!chain)
      throw refused(
        503,
        'chain_unavailable',
        `No RPC is configured for ${r.chain}: refunds cannot be verified.`,
        'chain',
      );
    const read = await chain.read(hash).catch((err: unknown) => {
      throw errors.unavailable('the chain', err);
    });
    const attr = 'transaction_hash';
    if (read.state === 'unknown')
      throw refused(422, 'refund_transaction_not_found', `The chain ${r.chain} has no transaction ${hash}.`, attr);
    if (read.state === 'not_final')
      throw refused(
        409,
        'refund_not_final',
        `Transaction ${hash} is ${read.blockNumber === null ? 'not in a final block yet' : `in block ${read.blockNumber}, after the last final block ${read.finalBlock}`}; record the refund again once it is final.`,
        attr,
      ).withHeaders({ 'Retry-After': String(NOT_FINAL_RETRY_SECONDS) });
    if (read.state === 'reverted')
      throw refused(422, 'refund_reverted', `Transaction ${hash} reverted on chain: it moved nothing.`, attr);
    const token = r.token ?? '';
    const ofToken = read.transfers.filter((t) => t.token === token);
    if (ofToken.length === 0)
      throw refused(
        422,
        'refund_wrong_token',
        `Transaction ${hash} moves no ${token}, the token the request was paid in.`,
        attr,
      );
    const payments = await paymentRequestStore(this.db).payments(r.id);
    const payers = new Set(payments.filter((p) => p.status === 'mined').map((p) => p.from.toLowerCase()));
    const toPayer = ofToken.filter((t) => payers.has(t.to));
    if (toPayer.length === 0)
      throw refused(
        422,
        'refund_wrong_recipient',
        `Transaction ${hash} sends ${token} to ${ofToken.map((t) => t.to).join(', ')}, not to the address that paid (${[...payers].join(', ')}).`,
        attr,
      );
    const addresses = receivingAddressStore(this.db);
    const ours: FinalTransferLog[] = [];
    for (const t of toPayer) if ((await addresses.ownerOf(r.chain, t.from)) === r.appId) ours.push(t);
    if (ours.length === 0)
      throw refused(
        403,
        'refund_not_from_receiving_address',
        `Transaction ${hash} sends ${token} from ${toPayer.map((t) => t.from).join(', ')}, which is not one of your app's receiving addresses on ${r.chain}.`,
        attr,
      );
    const paying = amount === undefined ? ours[0] : ours.find((t) => t.amount.toString() === amount);
    if (!paying)
      throw refused(
        422,
        'refund_wrong_amount',
        `Transaction ${hash} refunds ${ours.map((t) => t.amount).join(', ')} (6 decimals), not ${amount}.`,
        'amount',
      );
    if (paying.amount === 0n)
      throw refused(422, 'refund_wrong_amount', `Transaction ${hash} refunds less than 0.000001 ${token}.`, 'amount');
    return { ...paying, blockNumber: read.blockNumber, blockTime: read.blockTime };
  }

  /** In `tx`: the refund and its claim, the request's new state and its event, the audit record. */
  private async insert(tx: Queryable, id: string, hash: string, t: Verified, actor: AuditActor): Promise<Refund> {
    const store = paymentRequestStore(tx);
    const r = (await store.findForUpdate(id))!;
    refundable(r);
    const [paid, refunded] = [BigInt(r.amountPaid), BigInt(r.amountRefunded) + t.amount];
    if (refunded > paid)
      throw refused(
        422,
        'refund_exceeds_amount_paid',
        `This refund of ${t.amount} would bring the refunds of ${r.id} to ${refunded}, more than the ${paid} paid (6 decimals).`,
        'amount',
      );
    const refund = await refundStore(tx).insert({
      id: newRefundId(),
      paymentRequestId: r.id,
      appId: r.appId,
      chain: r.chain,
      transactionHash: hash,
      logIndex: t.logIndex,
      token: t.token,
      from: t.from,
      to: t.to,
      amount: t.amount.toString(),
      blockNumber: t.blockNumber.toString(),
      blockTime: t.blockTime,
    });
    if (!refund) throw claimed();
    await refundStore(tx).addRefunded(r.id, refund.amount);
    const next = refundedState(
      { amountRefunded: refunded.toString(), token: r.token },
      {
        status: r.status,
        reason: null,
        amountPaid: paid,
      },
    );
    const changed = await store.setState(r.id, next.status, next.reason, r.amountPaid);
    const [payments, head, refunds] = [
      await store.payments(r.id),
      await store.chainHead(r.chain),
      await refundStore(tx).forRequest(r.id),
    ];
    const view = requestView(changed, payments, head, this.options.links, refunds);
    await this.options.outbox(
      tx,
      paymentRequestEvent(
        `payment_request.${next.status}`,
        changed,
        { ...view, refund: refundView(refund) },
        changed.updatedAt,
      ),
    );
    await this.options.audit?.record(
      {
        type: 'payment_request.refund_recorded',
        actor,
        subject: r.id,
        detail: {
          app_id: r.appId,
          refund_id: refund.id,
          transaction_hash: hash,
          amount: refund.amount,
          amount_refunded: changed.amountRefunded,
          status: changed.status,
        },
      },
      tx,
    );
    return refund;
  }
}

function refundable(r: PaymentRequest): void {
  if (!REFUNDABLE.includes(r.status) || r.amountPaid === '0' || r.token === null)
    throw errors.conflict(
      'payment_request_not_refundable',
      r.status === 'refunded'
        ? `Payment request ${r.id} is refunded: its refunds reach the ${r.amountPaid} paid.`
        : `Payment request ${r.id} is ${r.status}; only a request that received a payment (paid, paid_over, paid_late, underpaid, partially_refunded) can be refunded.`,
      'id',
    );
}

const claimed = () =>
  errors.conflict(
    'transaction_already_claimed',
    'A recorded payment or another refund already claims this transaction_hash on this chain; one on-chain transaction pays or refunds once.',
    'transaction_hash',
  );
