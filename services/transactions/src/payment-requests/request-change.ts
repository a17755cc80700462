import type { Queryable } from '@attest/common';
import type { OutboxWrite, PaymentRequestStatus } from '../kernel/events';
import type { Reason } from '../kernel/transaction';
import { paymentRequestEvent } from './payment-request-events';
import { paymentRequestStore } from './payment-request-store';
import type { PaymentRequest } from './payment-request-types';
import { requestView, type RequestLinks } from './payment-request-view';
import { refundsOf } from './refund-store';

/** Writes a request's new state and its event (`payment_request.<status>`) to the outbox, both in `tx`. */
/** Where a change's event goes, and the links its request's JSON carries. */
export interface StateWriter {
  outbox: OutboxWrite;
  links?: RequestLinks;
}

export async function changeState(
  tx: Queryable,
  { outbox, links }: StateWriter,
  r: PaymentRequest,
  status: PaymentRequestStatus,
  reason: Reason | null,
  amountPaid: bigint,
): Promise<PaymentRequest> {
  const store = paymentRequestStore(tx);
  const changed = await store.setState(r.id, status, reason, amountPaid.toString());
  const [payments, head, refunds] = await Promise.all([
    store.payments(r.id),
    store.chainHead(r.chain),
    refundsOf(tx, changed),
  ]);
  await outbox(
    tx,
    paymentRequestEvent(
      `payment_request.${status}`,
      changed,
      requestView(changed, payments, head, links, refunds),
      changed.updatedAt,
    ),
  );
  return changed;
}
