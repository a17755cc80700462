import { AppError, errors } from '../errors';
import type { FailureCount, FailurePolicy, PolicyState } from './failure-policy';

/*
 * The RateLimit fields of draft-ietf-httpapi-ratelimit-headers (-09 and later): structured-field lists,
 *   RateLimit-Policy: "per-id-and-address";q=10;w=900, "per-address";q=200;w=900
 *   RateLimit: "per-id-and-address";r=0;t=512
 * q: failures allowed per window, w: window in seconds, r: failures left, t: seconds until the window ends.
 */

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export function rateLimitPolicyField(policies: FailurePolicy[]): string {
  return policies.map((p) => `"${p.name}";q=${p.limit};w=${p.windowSeconds}`).join(', ');
}

export function rateLimitField(states: PolicyState[]): string {
  return states.map((s) => `"${s.policy.name}";r=${s.remaining};t=${seconds(s.resetMs)}`).join(', ');
}

/** The RateLimit fields for a response after a counted failure. */
export function failureFields(count: FailureCount): Record<string, string> {
  if (count.states.length === 0) return {};
  return {
    'RateLimit-Policy': rateLimitPolicyField(count.states.map((s) => s.policy)),
    RateLimit: rateLimitField(count.states),
  };
}

/** Headers of a 429: Retry-After, and the RateLimit fields of the policy that refused the request. */
export function refusalFields(state: PolicyState): Record<string, string> {
  return {
    'Retry-After': String(seconds(state.resetMs)),
    'RateLimit-Policy': rateLimitPolicyField([state.policy]),
    RateLimit: rateLimitField([{ ...state, remaining: 0 }]),
  };
}

/** 429 too_many_requests for a refused request, in the shared error shape. */
export function tooManyFailures(state: PolicyState): AppError {
  return errors.tooManyRequests(seconds(state.resetMs), refusalFields(state));
}
