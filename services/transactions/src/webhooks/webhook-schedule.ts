/** Standard Webhooks' retry schedule (seconds after each failed attempt); WEBHOOK_RETRY_SCHEDULE overrides it. */
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400];

/** An endpoint that has failed for this long without one success is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;

const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

export interface AttemptOutcome {
  /** The HTTP status answered; null when there was no answer (refused target, network error, timeout). */
  statusCode: number | null;
  /** Retry-After of the answer, as sent. */
  retryAfter?: string;
}

/**
 * Answers that mean "slow down" rather than "broken": they pause every delivery to the endpoint (until
 * Retry-After when given, else until the delivery's next attempt) and do not count toward the endpoint's
 * failures in a row (the webhook_endpoint.failing report); the delivery's own attempt is still counted.
 */
export const THROTTLE_STATUSES: readonly number[] = [429, 502, 503, 504];

/** Each retry waits its scheduled delay plus up to this share of it, at random, so retries spread out. */
export const RETRY_JITTER = 0.2;

export type NextStep =
  | { kind: 'succeeded' }
  | { kind: 'retry'; delayMs: number; throttle: boolean }
  | { kind: 'give-up'; throttle: boolean }
  | { kind: 'disable'; reason: string };

/** Retry-After as milliseconds from now: delay-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: Date): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.min(Math.max(0, at - now.getTime()), MAX_RETRY_AFTER_MS);
}

/**
 * What follows attempt number `attempt` (1 for the first) of a delivery: 2xx succeeds; 410 Gone disables
 * the endpoint; any other failure is retried after schedule[attempt - 1] seconds plus a jitter of up to
 * RETRY_JITTER of it (later, when a throttling answer asks for it with Retry-After) until the schedule runs
 * out, and disables the endpoint once it has been failing for DISABLE_AFTER_MS. `random` is in [0, 1).
 */
export function nextStep(
  outcome: AttemptOutcome,
  attempt: number,
  schedule: number[],
  failingSince: Date | null,
  now: Date,
  random: () => number = Math.random,
): NextStep {
  const status = outcome.statusCode;
  if (status !== null && status >= 200 && status < 300) return { kind: 'succeeded' };
  if (status === 410) return { kind: 'disable', reason: 'the endpoint answered 410 Gone' };
  if (failingSince && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS)
    return { kind: 'disable', reason: 'the endpoint failed for 5 days' };
  const throttle = status !== null && THROTTLE_STATUSES.includes(status);
  if (attempt > schedule.length) return { kind: 'give-up', throttle };
  const scheduled = schedule[attempt - 1] * 1000;
  const jittered = Math.round(scheduled * (1 + RETRY_JITTER * random()));
  const asked = throttle ? retryAfterMs(outcome.retryAfter, now) : null;
  return { kind: 'retry', delayMs: Math.max(jittered, asked ?? 0), throttle };
}

/**
 * How long a throttling answer pauses the whole endpoint: Retry-After when given, else the delivery's
 * own next delay (0 when it gave up).
 */
export function throttleMs(outcome: AttemptOutcome, step: NextStep, now: Date): number | null {
  if ((step.kind !== 'retry' && step.kind !== 'give-up') || !step.throttle) return null;
  return retryAfterMs(outcome.retryAfter, now) ?? (step.kind === 'retry' ? step.delayMs : 0);
}

/** Parses WEBHOOK_RETRY_SCHEDULE ("5,300,…"); null when it is not a list of whole seconds. */
export function parseRetrySchedule(value: string): number[] | null {
  const parts = value.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.length > 50 || parts.some((p) => !/^\d{1,7}$/.test(p))) return null;
  return parts.map(Number);
}
