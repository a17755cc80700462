import { errors, type AuditActor, type AuditLog, type Queryable } from '@attest/common';
import { paymentRequestStore } from './payment-request-store';
import type { PaymentRequest } from './payment-request-types';
import { changeState, type StateWriter } from './request-change';

/**
 * Cancels an open request in `tx`: only a `pending` one (nothing received, no payment in a block) can be; it
 * becomes `canceled` (canceled_at noted, payment_request.canceled, audit record payment_request.canceled).
 * A payment that completes it afterwards is recorded and flagged (paid_late, paid_after_cancel), never paid.
 */
export async function cancelRequest(
  tx: Queryable,
  writer: StateWriter,
  audit: Pick<AuditLog, 'record'> | undefined,
  input: { appId: string; id: string; actor: AuditActor },
): Promise<PaymentRequest> {
  const r = await paymentRequestStore(tx).findForUpdate(input.id);
  if (!r || r.appId !== input.appId) throw errors.notFound('No payment request with this id for this app.', 'id');
  if (r.status !== 'pending')
    throw errors.conflict(
      'payment_request_not_open',
      `Payment request ${r.id} is ${r.status}; only a pending request (nothing received, no payment in a block) can be canceled.`,
      'id',
    );
  const canceled = await changeState(
    tx,
    writer,
    r,
    'canceled',
    {
      code: 'canceled',
      detail: 'The app canceled the request; a payment arriving now is recorded and flagged, never paid.',
    },
    0n,
  );
  await audit?.record(
    {
      type: 'payment_request.canceled',
      actor: input.actor,
      subject: r.id,
      detail: { app_id: r.appId, reference: r.reference },
    },
    tx,
  );
  return canceled;
}
