import { createPrivateKey, createPublicKey, generateKeyPair, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { LocalCache, MemoryBus, type InvalidationBus, type Logger, type Queryable } from '@attest/common';
import type { KeyAlg, KeyStore, StoredKey } from './key-store';
import { prepareJson, type PreparedJson } from './prepared-json';
import { decrypt, encrypt } from './crypto';
import { newKid } from './ids';

/** An RSA key (n, e) for RS256 or PS256, or a P-256 key (crv, x, y) for ES256. */
export interface PublicJwk {
  kty: string;
  n?: string;
  e?: string;
  crv?: string;
  x?: string;
  y?: string;
  kid: string;
  alg: KeyAlg;
  use: 'sig';
}

export interface SigningKey {
  kid: string;
  alg: KeyAlg;
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
 * Signing keys kept in Postgres, private parts encrypted at rest: a set per algorithm (RS256, the
 * default and every access token's; PS256 and ES256, made when an app's id_tokens first need them),
 * a key never used with two. Rotation happens under an advisory lock so many replicas agree on one
 * active key per algorithm; retired keys stay in the JWKS until every token they signed has expired.
 */
const generateRsaKeyPair = promisify(generateKeyPair);

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
    this.active = new LocalCache(bus, { name: 'signing-key', ttlMs, max: 3 });
    this.published = new LocalCache(bus, { name: 'published-keys', ttlMs, max: 1 });
  }

  /** The key to sign with now; rotates when the active key of the algorithm is older than the rotation period. */
  async signingKey(alg: KeyAlg = 'RS256'): Promise<SigningKey> {
    const name = alg === 'RS256' ? 'active' : `active-${alg}`;
    const cached = await this.active.get(name, () => this.loadActive(alg));
    if (cached && Date.now() < cached.rotateAt) return cached.key;
    const fresh = await this.loadActive(alg);
    this.active.set(name, fresh);
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
      const kid = await this.replace(tx, current, 'RS256');
      // every other algorithm in use rotates with it
      const others: string[] = [];
      for (const alg of await this.store.activeAlgs(tx)) {
        if (alg !== 'RS256') others.push(await this.replace(tx, await this.store.active(tx, alg), alg));
      }
      const revoked = options.revokePrevious ? await this.store.revokeAllBut(tx, [kid, ...others]) : [];
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

  /**
   * The JWKS document when the key set is in memory and current (what peek says of the cache), else
   * undefined: /jwks then answers in the request's own tick instead of after a promise.
   */
  currentJwksDocument(): PreparedJson | undefined {
    return this.published.peek('published')?.document;
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

  private async loadActive(alg: KeyAlg): Promise<ActiveKey> {
    const now = Date.now();
    let rotated = false;
    const stored = await this.store.withRotationLock(async (tx) => {
      const current = await this.store.active(tx, alg);
      if (current && current.ageMs < this.options.rotationMs) return current;
      await this.replace(tx, current, alg);
      rotated = true;
      return (await this.store.active(tx, alg))!;
    });
    if (rotated) await this.keysChanged();
    const privateKey = createPrivateKey(decrypt(this.options.keyEncryptionKey, stored.privateKeyEnc));
    const key = { kid: stored.kid, alg, privateKey };
    return { key, rotateAt: now + (this.options.rotationMs - stored.ageMs) };
  }

  /** Inserts a new key and retires the current one, inside the rotation lock; returns the new kid. */
  private async replace(tx: Queryable, current: StoredKey | null, alg: KeyAlg): Promise<string> {
    const fresh = alg === 'RS256' ? await this.generate() : this.generateFor(alg);
    await this.store.insert(tx, { ...fresh, alg });
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
    const { kty, n, e, crv, x, y } = key.publicJwk;
    const alg = key.alg ?? 'RS256';
    return kty === 'EC'
      ? { kty, crv, x, y, kid: key.kid, alg, use: 'sig' }
      : { kty, n, e, kid: key.kid, alg, use: 'sig' };
  }

  /** A PS256 (RSA-2048) or ES256 (P-256) key, with node's own crypto. */
  private generateFor(alg: Exclude<KeyAlg, 'RS256'>): {
    kid: string;
    publicJwk: Record<string, string>;
    privateKeyEnc: string;
  } {
    const kid = newKid();
    const { publicKey, privateKey } =
      alg === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicJwk = publicKey.export({ format: 'jwk' }) as Record<string, string>;
    const privatePem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    return { kid, publicJwk, privateKeyEnc: encrypt(this.options.keyEncryptionKey, privatePem) };
  }

  private async generate(): Promise<{ kid: string; publicJwk: Record<string, string>; privateKeyEnc: string }> {
    const kid = newKid();
    // node's own crypto, off the event loop: the stored shape is node-jose's, which made these keys
    // before (a public JWK with kid, alg and use; the private key as PKCS#1 PEM), without the ~7 MB of
    // memory that node-jose, lodash and node-forge took in every process that made a key
    const { publicKey, privateKey } = await generateRsaKeyPair('rsa', { modulusLength: 2048 });
    const publicJwk = {
      ...(publicKey.export({ format: 'jwk' }) as Record<string, string>),
      kid,
      alg: 'RS256',
      use: 'sig',
    };
    const privatePem = privateKey.export({ format: 'pem', type: 'pkcs1' }) as string;
    return { kid, publicJwk, privateKeyEnc: encrypt(this.options.keyEncryptionKey, privatePem) };
  }
}
