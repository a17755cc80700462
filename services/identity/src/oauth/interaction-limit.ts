import { AppError, FailureLimiter, refusalFields, type Cache, type PolicyState } from '@attest/common';
import type { IdentityConfig } from '../config';

const POLICY = 'interactions-per-address';

/** 429 too_many_requests with Retry-After and the RateLimit fields, as every other limit answers. */
function refusal(state: PolicyState): AppError {
  const headers = refusalFields(state);
  return new AppError(
    'too_many_requests',
    429,
    `Too many sign-ins were started from this address; try again in ${headers['Retry-After']} seconds.`,
    null,
    { headers },
  );
}

/**
 * New sign-in interactions (an /authorize that parks a request for the sign-in or consent page) per
 * client address, INTERACTIONS_PER_ADDRESS per AUTH_FAILURE_WINDOW_SECONDS: each one holds a few KiB
 * in the cache for 15 minutes, so one address cannot fill it. A silent sign-in (already signed in and
 * consented) parks nothing and is not counted. The slot is taken before the interaction is written,
 * so parallel requests cannot park more than the limit.
 */
export class InteractionLimit {
  private readonly limiter: FailureLimiter;

  constructor(cache: Cache, config: Pick<IdentityConfig, 'INTERACTIONS_PER_ADDRESS' | 'AUTH_FAILURE_WINDOW_SECONDS'>) {
    this.limiter = new FailureLimiter(cache, 'interactions', [
      { name: POLICY, limit: config.INTERACTIONS_PER_ADDRESS, windowSeconds: config.AUTH_FAILURE_WINDOW_SECONDS },
    ]);
  }

  /** Counts one new interaction from `address`: null while within the limit, else the 429 to answer. */
  async take(address: string): Promise<AppError | null> {
    const keys = { [POLICY]: address };
    const blocked = this.limiter.blocked(keys);
    if (blocked) return refusal(blocked);
    const count = await this.limiter.recordFailure(keys);
    return count.exceeded ? refusal(count.exceeded) : null;
  }
}
