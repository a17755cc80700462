/** At most `limit` failures per key in a fixed window of `windowSeconds`. */
export interface FailurePolicy {
  /** Names the policy in the RateLimit fields and in storage keys. */
  name: string;
  limit: number;
  windowSeconds: number;
  /**
   * The name of another policy of the same limiter: this one refuses a request only when the request's
   * key under that policy has failed at least once in its window. For a key anyone can spend (a client
   * id, an API key id: public), so that failures sent from elsewhere never refuse an address that sent
   * none: past the limit, every address that failed is refused, and each new one fails once at most.
   */
  refusesOnlyAfter?: string;
}

/** The key each policy counts a request under (an id or an address, never a secret); none: it does not apply. */
export type FailureKeys = Readonly<Record<string, string | undefined>>;

export interface PolicyState {
  policy: FailurePolicy;
  remaining: number;
  resetMs: number;
}

/** What counting one failure found: every applicable policy's state, and the first one now over its limit. */
export interface FailureCount {
  states: PolicyState[];
  exceeded: PolicyState | null;
}

/** One attempt holding a slot under every applicable policy, taken before its secret is checked. */
export interface Attempt {
  /** The secret was right: the slot is given back, and the counts of the policies named in `forget` are cleared. */
  succeeded(forget?: readonly string[]): Promise<void>;
  /** The secret was wrong: the slot stays taken, as one counted failure. */
  failed(): Promise<FailureCount>;
}

/** Either a slot for the attempt, or the state of the first policy that refuses it. */
export type Admission = { attempt: Attempt; refused?: undefined } | { refused: PolicyState; attempt?: undefined };

/** What `checkNow` did: refused the attempt, or ran the check, which passed or failed (and was counted). */
export type CheckOutcome =
  | { outcome: 'refused'; refused: PolicyState }
  | { outcome: 'passed' }
  | { outcome: 'failed'; count: Promise<FailureCount> };
