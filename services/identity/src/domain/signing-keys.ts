import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import jose from 'node-jose';
import type { Logger } from '@attest/common';
import type { KeyStore, StoredKey } from '../store/key-store';
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
  private active?: { key: SigningKey; rotateAt: number; loadedAt: number };
  private published?: { keys: StoredKey[]; loadedAt: number };
  private readonly publicKeys = new Map<string, KeyObject>();

  constructor(private readonly store: KeyStore, private readonly options: SigningKeysOptions, private readonly logger: Logger) {}

  private get refreshMs() {
    return this.options.refreshMs ?? 60000;
  }

  /** The key to sign with now; rotates when the active key is older than the rotation period. */
  async signingKey(): Promise<SigningKey> {
    const cached = this.active;
    const now = Date.now();
    if (cached && now - cached.loadedAt < this.refreshMs && now < cached.rotateAt) return cached.key;
    const stored = await this.store.withRotationLock(async (tx) => {
      const current = await this.store.active(tx);
      if (current && current.ageMs < this.options.rotationMs) return current;
      const fresh = await this.generate();
      await this.store.insert(tx, fresh);
      if (current) await this.store.retire(tx, current.kid, this.options.maxTokenTtlMs + 5 * 60000);
      this.logger.info('signing key rotated', { kid: fresh.kid, retired: current?.kid ?? null });
      return (await this.store.active(tx))!;
    });
    const key = { kid: stored.kid, privateKey: createPrivateKey(decrypt(this.options.keyEncryptionKey, stored.privateKeyEnc)) };
    this.active = { key, rotateAt: now + (this.options.rotationMs - stored.ageMs), loadedAt: now };
    this.published = undefined;
    return key;
  }

  /** The JWKS: every key whose tokens may still be in use. */
  async jwks(): Promise<PublicJwk[]> {
    return (await this.publishedKeys(false)).map((k) => this.toPublicJwk(k));
  }

  /** The public key for a kid, or null when no published key has it. */
  async verificationKey(kid: string): Promise<KeyObject | null> {
    let key = (await this.publishedKeys(false)).find((k) => k.kid === kid);
    if (!key) key = (await this.publishedKeys(true)).find((k) => k.kid === kid);
    if (!key) return null;
    let object = this.publicKeys.get(kid);
    if (!object) {
      object = createPublicKey({ key: { ...this.toPublicJwk(key) }, format: 'jwk' });
      this.publicKeys.set(kid, object);
    }
    return object;
  }

  private async publishedKeys(forceRefresh: boolean): Promise<StoredKey[]> {
    const now = Date.now();
    if (!forceRefresh && this.published && now - this.published.loadedAt < this.refreshMs) return this.published.keys;
    if (forceRefresh && this.published && now - this.published.loadedAt < 1000) return this.published.keys;
    let keys = await this.store.published();
    if (keys.length === 0) {
      await this.signingKey();
      keys = await this.store.published();
    }
    this.published = { keys, loadedAt: now };
    return keys;
  }

  private toPublicJwk(key: StoredKey): PublicJwk {
    const { kty, n, e } = key.publicJwk;
    return { kty, n, e, kid: key.kid, alg: 'RS256', use: 'sig' };
  }

  private async generate(): Promise<{ kid: string; publicJwk: Record<string, string>; privateKeyEnc: string }> {
    const kid = newKid();
    const jwk = await jose.JWK.createKey('RSA', 2048, { kid, alg: 'RS256', use: 'sig' });
    const publicJwk = jwk.toJSON() as Record<string, string>;
    const privatePem = jwk.toPEM(true);
    return { kid, publicJwk, privateKeyEnc: encrypt(this.options.keyEncryptionKey, privatePem) };
  }
}
