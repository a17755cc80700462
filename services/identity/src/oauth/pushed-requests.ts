import type { Cache } from '@attest/common';
import type { Params } from './authorization-request';
import { newOpaqueId } from '../kernel/ids';

/** RFC 9126 §2.2: the request_uri a pushed request is referred to by. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** How long a pushed request may wait for the browser (RFC 9126 suggests short; FAPI 2.0 asks ≤ 600 s). */
export const PUSHED_REQUEST_TTL_SECONDS = 60;

export interface PushedRequest {
  clientId: string;
  /** The authorization request's parameters, checked when they were pushed (a request object already opened). */
  params: Params;
}

/**
 * Pushed authorization requests in the shared cache (Redis with replicas): any replica can answer the
 * /authorize that uses one, and exactly one use succeeds (an atomic take), within the TTL.
 */
export class PushedRequests {
  constructor(
    private readonly cache: Cache,
    /** The clock of expiry (tests move it on); the cache's TTL is the backstop that frees the entry. */
    private readonly now: () => number = Date.now,
    private readonly ttlSeconds = PUSHED_REQUEST_TTL_SECONDS,
  ) {}

  async push(request: PushedRequest): Promise<{ requestUri: string; expiresIn: number }> {
    const id = newOpaqueId();
    const stored = { ...request, expiresAt: this.now() + this.ttlSeconds * 1000 };
    await this.cache.set(`par:${id}`, JSON.stringify(stored), this.ttlSeconds * 1000);
    return { requestUri: `${REQUEST_URI_PREFIX}${id}`, expiresIn: this.ttlSeconds };
  }

  /**
   * The pushed request of app `clientId`, once: null when unknown, expired, already used, or another app's.
   * Another app's client_id neither reads nor spends it (RFC 9126 §4: a request_uri is bound to its client),
   * so the app that pushed it can still use it; of two uses by its own app, the atomic take lets one win.
   */
  async take(requestUri: string, clientId: string): Promise<PushedRequest | null> {
    const id = requestUri.startsWith(REQUEST_URI_PREFIX) ? requestUri.slice(REQUEST_URI_PREFIX.length) : '';
    if (!/^[0-9a-f]{64}$/.test(id)) return null;
    const key = `par:${id}`;
    const seen = await this.cache.get(key);
    if (seen === null || (JSON.parse(seen) as PushedRequest).clientId !== clientId) return null;
    const raw = await this.cache.take(key);
    if (raw === null) return null;
    const { expiresAt, ...request } = JSON.parse(raw) as PushedRequest & { expiresAt: number };
    return this.now() < expiresAt && request.clientId === clientId ? request : null;
  }
}
