import type { Logger } from '@attest/common';
import type { AuthorizationKey, SettlementStore } from './settlement-store';

/**
 * Keeps a claim that waits to submit alive: extends its lease every third of it while the claim is still the
 * caller's (its fencing token) and has no transaction hash, until stopped. The relayer's lock may be held
 * longer than a lease (settlements ahead of this one, a slow RPC): without this, another settle would take
 * the claim over from a settle that is alive. The fence (setTransactionHash) still keeps a settle whose claim
 * was taken over (its replica stalled longer than a lease) from sending. Returns the stop.
 */
export function keepClaim(
  settlements: Pick<SettlementStore, 'renewLease'>,
  key: AuthorizationKey,
  fence: number,
  leaseMs: number,
  logger: Logger,
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const every = Math.max(Math.floor(leaseMs / 3), 10);
  const next = () => {
    timer = setTimeout(() => {
      if (stopped) return;
      settlements.renewLease(key, fence, leaseMs).then(
        // false: the hash is stored, or the claim is no longer ours; nothing more to keep
        (held) => {
          if (held && !stopped) next();
        },
        (err: Error) => {
          logger.warn('x402 claim lease not renewed', { error: err.message });
          if (!stopped) next();
        },
      );
    }, every);
    timer.unref();
  };
  next();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
