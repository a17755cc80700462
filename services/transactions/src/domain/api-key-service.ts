import { constantTimeEqual, invalidateAfterCommit, type Cache, type Logger } from '@attest/common';
import type { ApiKeyRecord, ApiKeyStore } from '../store/api-key-store';
import { hashApiKeySecret, newApiKey, parseApiKey } from './api-keys';

export interface VerifiedKey {
  keyId: string;
  appId: string;
}

/**
 * Verifies API keys in constant time. A verified key is cached for a few seconds under a name that
 * includes its hash, so revocation deletes exactly that entry and takes effect at once on every replica.
 */
export class ApiKeyService {
  constructor(
    private readonly store: ApiKeyStore,
    private readonly cache: Cache,
    private readonly serverSecret: string,
    private readonly cacheSeconds: number,
    private readonly logger: Logger,
  ) {}

  private cacheKey(keyId: string, secretHash: string) {
    return `apikey:${keyId}:${secretHash}`;
  }

  async create(appId: string, name: string | null): Promise<{ apiKey: string; record: ApiKeyRecord }> {
    const { apiKey, keyId, secret } = newApiKey();
    const record = await this.store.insert({ id: keyId, appId, secretHash: hashApiKeySecret(this.serverSecret, secret), name });
    return { apiKey, record };
  }

  async verify(apiKey: string): Promise<VerifiedKey | null> {
    const parsed = parseApiKey(apiKey);
    if (!parsed) return null;
    const presented = hashApiKeySecret(this.serverSecret, parsed.secret);
    const cacheKey = this.cacheKey(parsed.keyId, presented);
    if (this.cacheSeconds > 0) {
      const cached = await this.cache.get(cacheKey);
      if (cached) return { keyId: parsed.keyId, appId: cached };
    }
    const record = await this.store.find(parsed.keyId);
    const matches = constantTimeEqual(presented, record?.secretHash ?? '0'.repeat(64));
    if (!record || !matches || record.revokedAt) return null;
    if (this.cacheSeconds > 0) await this.cache.set(cacheKey, record.appId, this.cacheSeconds * 1000);
    this.store.touch(record.id).catch((err: Error) => this.logger.warn('could not record API key use', { key_id: record.id, error: err.message }));
    return { keyId: record.id, appId: record.appId };
  }

  async revoke(keyId: string): Promise<ApiKeyRecord | null> {
    const record = await this.store.revoke(keyId);
    if (record) {
      const key = this.cacheKey(record.id, record.secretHash);
      await invalidateAfterCommit(this.cache, [key], this.logger, { entryTtlMs: this.cacheSeconds * 1000 });
    }
    return record;
  }
}
