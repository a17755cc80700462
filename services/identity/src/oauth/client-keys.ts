import { createPublicKey, type KeyObject } from 'node:crypto';
import { fetchPublicJwks, type Logger, type OutboundPolicy } from '@attest/common';
import type { App, ClientJwk, SigningAlg } from '../kernel/app-store';

/** The algorithms accepted from apps: client assertions (private_key_jwt) and signed request objects. */
export const CLIENT_SIGNING_ALGS: SigningAlg[] = ['RS256', 'PS256', 'ES256'];

const ktyOf = (alg: SigningAlg) => (alg === 'ES256' ? 'EC' : 'RSA');

/**
 * Why a JWK Set cannot be an app's keys, naming `field`; null when it can: public signature keys of
 * the accepted algorithms (RSA of 2048 bits or more, EC on P-256), never a private part.
 */
export function clientJwksProblem(jwks: { keys: ClientJwk[] }, field: string): string | null {
  for (const [i, jwk] of jwks.keys.entries()) {
    const at = `${field}.keys[${i}]`;
    if ('d' in jwk || 'p' in jwk || 'k' in jwk) return `${at} must be a public key (it has a private or secret part).`;
    if (jwk.use !== undefined && jwk.use !== 'sig') return `${at}.use must be sig.`;
    if (jwk.alg !== undefined && !(CLIENT_SIGNING_ALGS as string[]).includes(jwk.alg))
      return `${at}.alg must be one of ${CLIENT_SIGNING_ALGS.join(', ')}.`;
    if (jwk.kty === 'EC' && jwk.crv !== 'P-256') return `${at} must be on the P-256 curve (ES256).`;
    if (jwk.kty !== 'RSA' && jwk.kty !== 'EC') return `${at}.kty must be RSA or EC.`;
    try {
      const key = createPublicKey({ key: jwk as never, format: 'jwk' });
      if (jwk.kty === 'RSA' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048)
        return `${at} must be an RSA key of at least 2048 bits.`;
    } catch {
      return `${at} is not a valid JWK.`;
    }
  }
  const kids = jwks.keys.map((k) => k.kid).filter((k) => k !== undefined);
  if (new Set(kids).size !== kids.length) return `${field} must not hold two keys with the same kid.`;
  return null;
}

/** The key of a set a JWT with this header names: by kid, else the only key of the algorithm's type. */
function pick(keys: readonly ClientJwk[], kid: string | undefined, alg: SigningAlg): ClientJwk | null {
  const usable = keys.filter(
    (k) =>
      k.kty === ktyOf(alg) &&
      (k.use === undefined || k.use === 'sig') &&
      (k.alg === undefined || k.alg === alg) &&
      (kid === undefined || k.kid === kid),
  );
  return usable.length === 1 ? usable[0] : null;
}

interface Fetched {
  uri: string;
  keys: ClientJwk[];
  fetchedAt: number;
}

export interface ClientKeysOptions {
  /** How long a fetched JWK Set is used before it is fetched again. */
  ttlMs: number;
  /** An unknown kid refetches the set, at most this often per app. */
  refreshAfterMs: number;
  timeoutMs: number;
  maxBytes: number;
  /** Apps whose fetched sets are kept (the oldest leave first). */
  max: number;
  now: () => number;
}

/**
 * The public keys of apps: an app's `jwks`, or the JWK Set at its `jwks_uri`, fetched through the outbound
 * guard (https, public addresses unless allowed, the checked address connected to, no redirects),
 * kept in memory for ttlMs and fetched again when a JWT names a kid the set does not have (a rotation
 * by the app). An app without keys has none: nothing signed by it is accepted.
 */
export class ClientKeys {
  private readonly fetched = new Map<string, Fetched>();
  private readonly pending = new Map<string, Promise<Fetched | null>>();
  private readonly options: ClientKeysOptions;

  constructor(
    private readonly policy: OutboundPolicy,
    private readonly logger: Logger,
    options: Partial<ClientKeysOptions> = {},
  ) {
    this.options = {
      ttlMs: 300000,
      refreshAfterMs: 10000,
      timeoutMs: 5000,
      maxBytes: 64 * 1024,
      max: 10000,
      now: Date.now,
      ...options,
    };
  }

  /** The key to verify a JWT of this app with (its header's kid and alg), or null. */
  async key(app: App, kid: string | undefined, alg: SigningAlg): Promise<KeyObject | null> {
    let jwk: ClientJwk | null = null;
    if (app.jwks) jwk = pick(app.jwks.keys, kid, alg);
    else if (app.jwksUri) {
      const set = await this.remote(app.id, app.jwksUri, false);
      jwk = set ? pick(set.keys, kid, alg) : null;
      if (!jwk && set && this.options.now() - set.fetchedAt >= this.options.refreshAfterMs) {
        const fresh = await this.remote(app.id, app.jwksUri, true);
        jwk = fresh ? pick(fresh.keys, kid, alg) : null;
      }
    }
    if (!jwk) return null;
    try {
      return createPublicKey({ key: jwk as never, format: 'jwk' });
    } catch {
      return null;
    }
  }

  private async remote(appId: string, uri: string, refresh: boolean): Promise<Fetched | null> {
    const known = this.fetched.get(appId);
    if (!refresh && known && known.uri === uri && this.options.now() - known.fetchedAt < this.options.ttlMs)
      return known;
    let running = this.pending.get(appId);
    if (!running) {
      running = this.load(appId, uri).finally(() => this.pending.delete(appId));
      this.pending.set(appId, running);
    }
    // a set that cannot be fetched now: the last one still serves, so an outage at the app does not lock it out
    return (await running) ?? (known?.uri === uri ? known : null);
  }

  private async load(appId: string, uri: string): Promise<Fetched | null> {
    try {
      const keys: ClientJwk[] = await fetchPublicJwks(new URL(uri), this.policy, this.options);
      const fetched = { uri, keys, fetchedAt: this.options.now() };
      this.fetched.delete(appId);
      this.fetched.set(appId, fetched);
      if (this.fetched.size > this.options.max) this.fetched.delete(this.fetched.keys().next().value!);
      return fetched;
    } catch (err) {
      this.logger.warn('app jwks_uri could not be fetched', { app_id: appId, error: (err as Error).message });
      return null;
    }
  }
}
