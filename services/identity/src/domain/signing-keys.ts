import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { LocalCache, MemoryBus, type InvalidationBus, type Logger, type Queryable } from '@attest/common';
import type { KeyStore, StoredKey } from '../store/key-store';
import { prepareJson, type PreparedJson } from './prepared-json';
import { decrypt, encrypt } from './crypto';
import { newKid } from './ids';

export interface PublicJwk {
  kty: string;
  n: string;
  e: string;
  kid: string;
  alg: 'RS256';
  use: 'sig';
}

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
}

interface ActiveKey {
  key: SigningKey;
  rotateAt: number;
}

/** The published keys, by kid, and the JWKS ready to send. */
interface KeyRing {
  byKid: Map<string, StoredKey>;
  /** Kids an emergency rotation revoked, while their tokens may be unexpired: such tokens are inactive. */
  revoked: Set<string>;
  jwks: PublicJwk[];
  document: PreparedJson;
}

export interface SigningKeysOptions {
  keyEncryptionKey: string;
  rotationMs: number;
  /** The longest token lifetime: a retired key stays published this long (plus a margin). */
  maxTokenTtlMs: number;
  /** How long a replica trusts its cached view of the keys table. */
  refreshMs?: number;
}

/**
 * RSA-2048 signing keys kept in Postgres, private parts encrypted at rest. Rotation happens under an
 * advisory lock so many replicas agree on one active key; retired keys stay in the JWKS until every
 * token they signed has expired.
 */
export class SigningKeys {
  private readonly active: LocalCache<ActiveKey>;
  private readonly published: LocalCache<KeyRing>;
  private readonly publicKeys = new Map<string, KeyObject>();
  private lastForcedRefresh = 0;

  constructor(
    private readonly store: KeyStore,
    private readonly options: SigningKeysOptions,
    private readonly logger: Logger,
    bus: InvalidationBus = new MemoryBus(),
  ) {
    const ttlMs = options.refreshMs ?? 60000;
    this.active = new LocalCache(bus, { name: 'signing-key', ttlMs, max: 1 });
    this.published = new LocalCache(bus, { name: 'published-keys', ttlMs, max: 1 });
  }

  /** The key to sign with now; rotates when the active key is older than the rotation period. */
  async signingKey(): Promise<SigningKey> {
    const cached = await this.active.get('active', () => this.loadActive());
    if (cached && Date.now() < cached.rotateAt) return cached.key;
    const fresh = await this.loadActive();
    this.active.set('active', fresh);
    return fresh.key;
  }

  /**
   * Retires the active key now. Its tokens keep verifying until they expire; with `revokePrevious`
   * (a key may be compromised) every earlier key still published (the one just retired, and any retired
   * before it) leaves the JWKS at once, and every token they signed is refused on every replica (their
   * caches of the key ring, which the cache of verified tokens consults, are dropped through the bus).
   */
  async rotate(
    options: { revokePrevious?: boolean } = {},
  ): Promise<{ kid: string; retired: string | null; revoked: string[] }> {
    const result = await this.store.withRotationLock(async (tx) => {
      const current = await this.store.active(tx);
      const kid = await this.replace(tx, current);
      const revoked = options.revokePrevious ? await this.store.revokeAllBut(tx, kid) : [];
      return { kid, retired: current?.kid ?? null, revoked };
    });
    await this.keysChanged();
    if (result.revoked.length) this.logger.warn('signing keys revoked', { kids: result.revoked });
    return result;
  }

  /** Whether the kid is in the JWKS (a memory lookup once warm): a token it signed may be trusted. */
  async isPublished(kid: string): Promise<boolean> {
    return (await this.ring()).byKid.has(kid);
  }

  /** Whether an emergency rotation revoked the kid (its tokens are inactive rather than unknown). */
  async isRevoked(kid: string): Promise<boolean> {
    return (await this.ring()).revoked.has(kid);
  }

  /** The JWKS: every key whose tokens may still be in use. */
  async jwks(): Promise<PublicJwk[]> {
    return (await this.ring()).jwks;
  }

  /** The JWKS document, serialised once per change of the key set. */
  async jwksDocument(): Promise<PreparedJson> {
    return (await this.ring()).document;
  }

  /** The published keys with their dates, newest first (the admin list; from the database). */
  list(): Promise<StoredKey[]> {
    return this.store.published();
  }

  /** The public key for a kid, or null when no published key has it. */
  async verificationKey(kid: string): Promise<KeyObject | null> {
    let key = (await this.ring()).byKid.get(kid);
    if (!key && Date.now() - this.lastForcedRefresh > 1000) {
      // a key made by another replica moments ago: look once a second at most
      this.lastForcedRefresh = Date.now();
      const ring = await this.loadRing();
      this.published.set('published', ring);
      key = ring.byKid.get(kid);
    }
    if (!key) return null;
    let object = this.publicKeys.get(kid);
    if (!object) {
      object = createPublicKey({ key: { ...this.toPublicJwk(key) }, format: 'jwk' });
      this.publicKeys.set(kid, object);
    }
    return object;
  }

  private async ring(): Promise<KeyRing> {
    return (await this.published.get('published', () => this.loadRing()))!;
  }

  private async loadActive(): Promise<ActiveKey> {
    const now = Date.now();
    let rotated = false;
    const stored = await this.store.withRotationLock(async (tx) => {
      const current = await this.store.active(tx);
      if (current && current.ageMs < this.options.rotationMs) return current;
      await this.replace(tx, current);
      rotated = true;
      return (await this.store.active(tx))!;
    });
    if (rotated) await this.keysChanged();
    const privateKey = createPrivateKey(decrypt(this.options.keyEncryptionKey, stored.privateKeyEnc));
    const key = { kid: stored.kid, privateKey };
    return { key, rotateAt: now + (this.options.rotationMs - stored.ageMs) };
  }

  /** Inserts a new key and retires the current one, inside the rotation lock; returns the new kid. */
  private async replace(tx: Queryable, current: StoredKey | null): Promise<string> {
    const fresh = await this.generate();
    await this.store.insert(tx, fresh);
    if (current) await this.store.retire(tx, current.kid, this.options.maxTokenTtlMs + 5 * 60000);
    this.logger.info('signing key rotated', { kid: fresh.kid, retired: current?.kid ?? null });
    return fresh.kid;
  }

  /** After a rotation committed: every replica reloads its signing key and JWKS. */
  private async keysChanged(): Promise<void> {
    await Promise.all([this.active.invalidateAll(), this.published.invalidateAll()]);
  }

  private async loadRing(): Promise<KeyRing> {
    const [published, revoked] = await Promise.all([
      this.store.published(),
      this.store.revoked(this.options.maxTokenTtlMs),
    ]);
    let keys = published;
    if (keys.length === 0) {
      await this.signingKey();
      keys = await this.store.published();
    }
    const jwks = keys.map((k) => this.toPublicJwk(k));
    return {
      byKid: new Map(keys.map((k) => [k.kid, k])),
      revoked: new Set(revoked),
      jwks,
      document: prepareJson({ keys: jwks }),
    };
  }

  private toPublicJwk(key: StoredKey): PublicJwk {
    const { kty, n, e } = key.publicJwk;
    return { kty, n, e, kid: key.kid, alg: 'RS256', use: 'sig' };
  }

  private async generate(): Promise<{ kid: string; publicJwk: Record<string, string>; privateKeyEnc: string }> {
    const kid = newKid();
    // node-jose (with lodash and node-forge, about 7 MB of memory) only where a key is made: once per
    // rotation, by one replica; the others, and every restart, never load it
    const { default: jose } = await import('node-jose');
    const jwk = await jose.JWK.createKey('RSA', 2048, { kid, alg: 'RS256', use: 'sig' });
    const publicJwk = jwk.toJSON() as Record<string, string>;
    const privatePem = jwk.toPEM(true);
    return { kid, publicJwk, privateKeyEnc: encrypt(this.options.keyEncryptionKey, privatePem) };
  }
}
