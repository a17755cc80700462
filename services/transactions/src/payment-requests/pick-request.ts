import type { ScannedTransfer } from '../kernel/settlement';
import type { PaymentRequest } from './payment-request-types';

export type TransferMatch = { request: PaymentRequest } | { outcome: 'unmatched' | 'ambiguous'; candidates: number };

/**
 * The request a transfer that nobody recorded pays, among the open requests for its chain, token (settled in it,
 * or accepting it while settled in none) and
 * recipient that were created before its block (pending, detected, underpaid, failed with nothing
 * received, expired, or canceled): the only one; else, of those that are still owed exactly the transfer's amount,
 * the first not expired at the block's time (nor reported expired, nor canceled), oldest first, then the oldest other one; else none
 * (ambiguous: several, none owed this amount; or candidates of more than one app).
 */
/** Expired at the block's time, reported expired, or canceled: a payment for it would be flagged late. */
const closed = (r: PaymentRequest, blockTime: Date) =>
  r.expiresAt < blockTime || Boolean(r.expiredAt) || Boolean(r.canceledAt);

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
        Number(closed(a, transfer.blockTime)) - Number(closed(b, transfer.blockTime)) ||
        a.createdAt.getTime() - b.createdAt.getTime() ||
        (a.id < b.id ? -1 : 1),
    );
  return exact.length > 0 ? { request: exact[0] } : { outcome: 'ambiguous', candidates: candidates.length };
}
