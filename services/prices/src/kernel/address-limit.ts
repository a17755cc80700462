import type { NextFunction, Request, Response } from 'express';
import {
  AppError,
  clientAddress,
  errorResponse,
  rateLimitField,
  rateLimitPolicyField,
  type FailurePolicy,
  type ResponseDoc,
} from '@attest/common';

export interface AddressLimitOptions {
  /** Requests per address per window; 0 turns the limit off (PRICE_RATE_LIMIT_PER_MINUTE). */
  limit: number;
  windowSeconds: number;
  /** Addresses tracked per window at most; past it a new address is not counted (memory stays bounded). */
  maxAddresses?: number;
  now?: () => number;
}

/** The RateLimit fields (draft-ietf-httpapi-ratelimit-headers) on every counted answer. */
export const RATE_LIMIT_FIELDS = {
  'RateLimit-Policy': {
    description: '"per-address";q=<requests>;w=<seconds> (PRICE_RATE_LIMIT_PER_MINUTE per 60 s)',
    schema: { type: 'string' },
  },
  RateLimit: { description: '"per-address";r=<left>;t=<seconds until the window ends>', schema: { type: 'string' } },
};
/** The 429 of an endpoint the address limit counts. */
export const TOO_MANY: ResponseDoc = {
  ...errorResponse('too_many_requests: over PRICE_RATE_LIMIT_PER_MINUTE from this address; wait Retry-After seconds'),
  headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } }, ...RATE_LIMIT_FIELDS },
};

export const tooManyRequests = (retryAfter: number, headers: Record<string, string>) =>
  new AppError(
    'too_many_requests',
    429,
    `Too many requests from this address; try again in ${retryAfter} seconds.`,
    null,
    { headers: { 'Retry-After': String(retryAfter), ...headers } },
  );

/**
 * Requests per client address (clientAddress: TRUST_PROXY honoured, IPv6 by /64), counted in this process's
 * memory in fixed windows aligned on the clock: no store round trip on the hot path, so with N replicas an
 * address gets up to N × limit (documented). The counts of a window are dropped together when it ends.
 * Every counted answer carries the RateLimit fields; a refused one is 429 with Retry-After.
 */
export class AddressLimit {
  private readonly counts = new Map<string, number>();
  private windowEnd = 0;
  private readonly policy: FailurePolicy;
  private readonly policyField: string;
  private readonly now: () => number;

  constructor(private readonly options: AddressLimitOptions) {
    this.policy = { name: 'per-address', limit: options.limit, windowSeconds: options.windowSeconds };
    this.policyField = rateLimitPolicyField([this.policy]);
    this.now = options.now ?? Date.now;
  }

  /** Counts one request of the address; the headers to send, or a 429 when over the limit. */
  take(address: string): { headers: Record<string, string>; refused: AppError | null } {
    const now = this.now();
    const windowMs = this.options.windowSeconds * 1000;
    if (now >= this.windowEnd) {
      this.counts.clear();
      this.windowEnd = (Math.floor(now / windowMs) + 1) * windowMs;
    }
    const seen = this.counts.get(address);
    // requests seen this window, held at limit + 1 (refused from then on)
    const count = Math.min((seen ?? 0) + 1, this.options.limit + 1);
    if (seen !== undefined || this.counts.size < (this.options.maxAddresses ?? 100000)) this.counts.set(address, count);
    const resetMs = this.windowEnd - now;
    const remaining = Math.max(0, this.options.limit - count);
    const headers = {
      'RateLimit-Policy': this.policyField,
      RateLimit: rateLimitField([{ policy: this.policy, remaining, resetMs }]),
    };
    if (count <= this.options.limit) return { headers, refused: null };
    return { headers, refused: tooManyRequests(Math.max(1, Math.ceil(resetMs / 1000)), headers) };
  }

  /** Express middleware: counts the request, sets the RateLimit fields, refuses over the limit. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      if (this.options.limit <= 0 || req.method === 'OPTIONS') return next();
      const { headers, refused } = this.take(clientAddress(req));
      res.set(headers);
      next(refused ?? undefined);
    };
  }
}
