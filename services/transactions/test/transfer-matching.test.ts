import type { ScannedTransfer } from '../src/kernel/settlement';
import { pickRequest } from '../src/payment-requests/pick-request';
import type { PaymentRequest } from '../src/payment-requests/payment-request-types';

const blockTime = new Date('2026-11-27T12:00:00Z');
const transfer: ScannedTransfer = { chain: 'worldchain', token: 'USDCE', to: '0xshop', amount: 1000000n, blockTime };

let n = 0;
const request = (fields: {
  due: string;
  paid?: string;
  createdAt: string;
  expiresAt: string;
  appId?: string;
}): PaymentRequest =>
  ({
    id: `pr_${String(++n).padStart(32, '0')}`,
    appId: fields.appId ?? 'app_shop',
    amountDue: fields.due,
    amountPaid: fields.paid ?? '0',
    createdAt: new Date(fields.createdAt),
    expiresAt: new Date(fields.expiresAt),
  }) as PaymentRequest;

describe('which open payment request a transfer nobody recorded pays', () => {
  it('none: unmatched; the only one: that one, whatever the amount', () => {
    expect(pickRequest([], transfer)).toEqual({ outcome: 'unmatched', candidates: 0 });
    const only = request({ due: '5000000', createdAt: '2026-11-27T11:00:00Z', expiresAt: '2026-11-27T11:15:00Z' });
    expect(pickRequest([only], transfer)).toEqual({ request: only });
  });

  it('several: one still owed exactly the amount, not expired at the block first, then the oldest; none owed it: ambiguous', () => {
    const expiredOld = request({
      due: '1000000',
      createdAt: '2026-11-27T10:00:00Z',
      expiresAt: '2026-11-27T10:15:00Z',
    });
    const openOld = request({ due: '1000000', createdAt: '2026-11-27T11:50:00Z', expiresAt: '2026-11-27T12:05:00Z' });
    const openNew = request({ due: '1000000', createdAt: '2026-11-27T11:55:00Z', expiresAt: '2026-11-27T12:10:00Z' });
    const partlyPaid = request({
      due: '1500000',
      paid: '500000',
      createdAt: '2026-11-27T11:00:00Z',
      expiresAt: '2026-11-27T11:15:00Z',
    });
    const other = request({ due: '2000000', createdAt: '2026-11-27T09:00:00Z', expiresAt: '2026-11-27T13:00:00Z' });
    expect(pickRequest([expiredOld, openNew, openOld, other], transfer)).toEqual({ request: openOld });
    expect(pickRequest([expiredOld, other], transfer)).toEqual({ request: expiredOld });
    // owed: amount_due − amount_paid
    expect(pickRequest([partlyPaid, other], transfer)).toEqual({ request: partlyPaid });
    expect(
      pickRequest(
        [other, request({ due: '3000000', createdAt: '2026-11-27T11:00:00Z', expiresAt: '2026-11-27T13:00:00Z' })],
        transfer,
      ),
    ).toEqual({
      outcome: 'ambiguous',
      candidates: 2,
    });
  });

  it('candidates of several apps (one address named by two apps): ambiguous, even one owed exactly the amount', () => {
    const mine = request({ due: '1000000', createdAt: '2026-11-27T11:50:00Z', expiresAt: '2026-11-27T12:05:00Z' });
    const theirs = request({
      due: '1000000',
      createdAt: '2026-11-27T11:40:00Z',
      expiresAt: '2026-11-27T12:05:00Z',
      appId: 'app_other',
    });
    expect(pickRequest([theirs, mine], transfer)).toEqual({ outcome: 'ambiguous', candidates: 2 });
    expect(pickRequest([mine], transfer)).toEqual({ request: mine });
  });
});
