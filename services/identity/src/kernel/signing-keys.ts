import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { LocalCache, MemoryBus, type InvalidationBus, type Logger, type Queryable } from '@attest/common';
import { KEY_ALGS, type KeyAlg, type KeyStore, type StoredKey } from './key-store';
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

/** /jwks's Cache-Control max-age: how long a relying party may keep a copy of the key set. */
export const JWKS_MAX_AGE_SECONDS = 300;
/**
 * How long the next key of an algorithm is published before it signs on schedule: more than the JWKS
 * cache lifetime (twice it), so a relying party's copy fetched before the rotation already holds it.
 */
export const NEXT_KEY_LEAD_MS = 2 * JWKS_MAX_AGE_SECONDS * 1000;

/**
 * Signing keys kept in Postgres, private parts encrypted at rest: a set per algorithm discovery
 * advertises (RS256, the default and access tokens'; PS256 and ES256, id_tokens of apps that ask and
 * fapi2 apps' access tokens), a key never used with two. Each algorithm has its active key from start
 * (ensureKeys). NEXT_KEY_LEAD_MS before the active key is due, a next key is published (in the JWKS, not
 * signing); it signs only once the active one is due and it has been published for NEXT_KEY_LEAD_MS,
 * more than a relying party caches the JWKS. Rotation happens under an advisory lock so many replicas agree on one active key per
 * algorithm; retired keys stay in the JWKS until every token they signed has expired.
 */
const generateKeyPairAsync = promisify(generateKeyPair);

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

  /**
   * Makes the active key of every advertised algorithm where missing, side by side: at
   * start, before the first request, under the rotation lock (replicas starting together make one set).
   */
  async ensureKeys(): Promise<void> {
    const made = await this.store.withRotationLock(async (tx) => {
      const missing: KeyAlg[] = [];
      for (const alg of KEY_ALGS) if (!(await this.store.active(tx, alg))) missing.push(alg);
      // made side by side, off the event loop (node's thread pool), then inserted
      const fresh = await Promise.all(missing.map((alg) => this.generateKey(alg)));
      for (const [i, alg] of missing.entries()) await this.store.insert(tx, { ...fresh[i], alg }, true);
      return missing.length > 0;
    });
    if (made) await this.keysChanged();
    await this.signingKey();
  }

  /**
   * The key to sign with now. NEXT_KEY_LEAD_MS before the active key of the algorithm is due (older than
   * the rotation period), the next key is published; once the active key is due and the next one has
   * been published that long, the next one signs.
   */
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
    const emergency = options.revokePrevious === true;
    const result = await this.store.withRotationLock(async (tx) => {
      const kept: string[] = [];
      let rs256: { kid: string; retired: string | null } = { kid: '', retired: null };
      // every algorithm rotates alike: its next key when one is published (not in an emergency, when it
      // is revoked with the rest), else a new key, signs from now
      for (const alg of KEY_ALGS) {
        const current = await this.store.active(tx, alg);
        const next = emergency ? null : await this.store.next(tx, alg);
        const kid = next ? next.kid : await this.insertKey(tx, alg, true);
        if (next) await this.store.activate(tx, next.kid);
        if (current) await this.store.retire(tx, current.kid, this.options.maxTokenTtlMs + 5 * 60000);
        this.logger.info('signing key rotated', { alg, kid, retired: current?.kid ?? null });
        kept.push(kid);
        if (alg === 'RS256') rs256 = { kid, retired: current?.kid ?? null };
      }
      const revoked = emergency ? await this.store.revokeAllBut(tx, kept) : [];
      return { ...rs256, revoked };
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

  /** The algorithm of a published key (after verificationKey found it), or null. */
  async keyAlg(kid: string): Promise<KeyAlg | null> {
    return (await this.ring()).byKid.get(kid)?.alg ?? null;
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
    let changed = false;
    const { stored, waitMs } = await this.store.withRotationLock(async (tx) => {
      let current = await this.store.active(tx, alg);
      let next = await this.store.next(tx, alg);
      if (!current) {
        // the first start: no relying party can hold a copy of the JWKS without the key yet
        await this.insertKey(tx, alg, true);
        current = (await this.store.active(tx, alg))!;
        changed = true;
      }
      const untilDue = this.options.rotationMs - current.ageMs;
      if (!next && untilDue <= NEXT_KEY_LEAD_MS) {
        // the lead before the active key is due: the next key is published from now
        await this.insertKey(tx, alg, false);
        next = (await this.store.next(tx, alg))!;
        this.logger.info('next signing key published', { alg, kid: next.kid });
        changed = true;
      }
      if (!next) return { stored: current, waitMs: untilDue - NEXT_KEY_LEAD_MS };
      if (untilDue <= 0 && next.publishedMs >= NEXT_KEY_LEAD_MS) {
        await this.store.activate(tx, next.kid);
        await this.store.retire(tx, current.kid, this.options.maxTokenTtlMs + 5 * 60000);
        this.logger.info('signing key rotated', { alg, kid: next.kid, retired: current.kid });
        changed = true;
        const fresh = (await this.store.active(tx, alg))!;
        return { stored: fresh, waitMs: this.options.rotationMs - NEXT_KEY_LEAD_MS };
      }
      // not due; or due, but the next key is too recent to be in every copy of the JWKS: the active key signs
      return { stored: current, waitMs: untilDue > 0 ? untilDue : NEXT_KEY_LEAD_MS - next.publishedMs };
    });
    if (changed) await this.keysChanged();
    const privateKey = createPrivateKey(decrypt(this.options.keyEncryptionKey, stored.privateKeyEnc));
    const key = { kid: stored.kid, alg, privateKey };
    // (at least a second: a rotation period shorter than the lead, as in tests, would look again at every call)
    return { key, rotateAt: now + Math.max(waitMs, 1000) };
  }

  /** Inserts a new key of the algorithm, signing at once or the next one, inside the rotation lock; returns its kid. */
  private async insertKey(tx: Queryable, alg: KeyAlg, active: boolean): Promise<string> {
    const fresh = await this.generateKey(alg);
    await this.store.insert(tx, { ...fresh, alg }, active);
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

  private generateKey(alg: KeyAlg): Promise<{ kid: string; publicJwk: Record<string, string>; privateKeyEnc: string }> {
    return alg === 'RS256' ? this.generate() : this.generateFor(alg);
  }

  /** A PS256 (RSA-2048) or ES256 (P-256) key, with node's own crypto (off the event loop). */
  private async generateFor(alg: Exclude<KeyAlg, 'RS256'>): Promise<{
    kid: string;
    publicJwk: Record<string, string>;
    privateKeyEnc: string;
  }> {
    const kid = newKid();
    const { publicKey, privateKey } =
      alg === 'ES256'
        ? await generateKeyPairAsync('ec', { namedCurve: 'P-256' })
        : await generateKeyPairAsync('rsa', { modulusLength: 2048 });
    // kid, alg and use in the stored JWK too, as the RS256 keys have them (the admin list shows them)
    const publicJwk = { ...(publicKey.export({ format: 'jwk' }) as Record<string, string>), kid, alg, use: 'sig' };
    const privatePem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    return { kid, publicJwk, privateKeyEnc: encrypt(this.options.keyEncryptionKey, privatePem) };
  }

  private async generate(): Promise<{ kid: string; publicJwk: Record<string, string>; privateKeyEnc: string }> {
    const kid = newKid();
    // node's own crypto, off the event loop: the stored shape is node-jose's, which made these keys
    // before (a public JWK with kid, alg and use; the private key as PKCS#1 PEM), without the ~7 MB of
    // memory that node-jose, lodash and node-forge took in every process that made a key
    const { publicKey, privateKey } = await generateKeyPairAsync('rsa', { modulusLength: 2048 });
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
