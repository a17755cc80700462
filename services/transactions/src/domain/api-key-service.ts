import type { AuditActor, AuditLog, Logger } from '@attest/common';
import type { ApiKeyRecord, ApiKeyStore } from '../store/api-key-store';
import { hashApiKeySecret, newApiKey, parseApiKey, sameKeyHash } from './api-keys';
import { LastUseRecorder } from './last-use';

export interface VerifiedKey {
  keyId: string;
  appId: string;
}

/**
 * Verifies API keys in constant time against their keyed hash. The store given is expected to keep
 * rows in memory (cachedApiKeyStore), so revocation takes effect at once here and on every replica.
 */
export class ApiKeyService {
  private readonly lastUse: LastUseRecorder;

  constructor(
    private readonly store: ApiKeyStore,
    private readonly serverSecret: string,
    logger: Logger,
    private readonly audit?: Pick<AuditLog, 'record'>,
  ) {
    this.lastUse = new LastUseRecorder(
      (keyId) => store.touch(keyId),
      (keyId, err) => logger.warn('could not record API key use', { key_id: keyId, error: err.message }),
    );
  }

  async create(
    appId: string,
    name: string | null,
    actor?: AuditActor,
  ): Promise<{ apiKey: string; record: ApiKeyRecord }> {
    const { apiKey, keyId, secret } = newApiKey();
    const record = await this.store.insert({
      id: keyId,
      appId,
      secretHash: hashApiKeySecret(this.serverSecret, secret),
      name,
    });
    if (actor)
      await this.audit?.record({ type: 'api_key.created', actor, subject: keyId, detail: { app_id: appId, name } });
    return { apiKey, record };
  }

  async verify(apiKey: string): Promise<VerifiedKey | null> {
    const parsed = parseApiKey(apiKey);
    if (!parsed) return null;
    const presented = hashApiKeySecret(this.serverSecret, parsed.secret);
    const record = await this.store.find(parsed.keyId);
    const matches = sameKeyHash(presented, record?.secretHash ?? '0'.repeat(64));
    if (!record || !matches || record.revokedAt) return null;
    this.lastUse.record(record.id);
    return { keyId: record.id, appId: record.appId };
  }

  async revoke(keyId: string, actor?: AuditActor): Promise<ApiKeyRecord | null> {
    const record = await this.store.revoke(keyId);
    if (record && actor)
      await this.audit?.record({ type: 'api_key.revoked', actor, subject: keyId, detail: { app_id: record.appId } });
    return record;
  }
}
