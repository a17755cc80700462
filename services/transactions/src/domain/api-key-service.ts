import type { AuditActor, AuditLog, Logger } from '@attest/common';
import type { ApiKeyRecord, ApiKeyStore } from '../store/api-key-store';
import { apiKeyHasher, newApiKey, type ApiKeyHasher, type ParsedApiKey } from './api-keys';
import { LastUseRecorder } from './last-use';

/** Compared against when the key id is unknown, so an unknown id costs what a known one does. */
const NO_HASH = '0'.repeat(64);

export interface VerifiedKey {
  keyId: string;
  appId: string;
  /** The key is right, but its app is disabled: the request is refused (401), not counted as a failure. */
  appDisabled: boolean;
}

/**
 * Verifies API keys in constant time against their keyed hash. The store given is expected to keep
 * rows in memory (cachedApiKeyStore), so revocation takes effect at once here and on every replica.
 */
export class ApiKeyService {
  private readonly lastUse: LastUseRecorder;
  private readonly hasher: ApiKeyHasher;

  constructor(
    private readonly store: ApiKeyStore,
    serverSecret: string,
    logger: Logger,
    private readonly audit?: Pick<AuditLog, 'record'>,
  ) {
    this.hasher = apiKeyHasher(serverSecret);
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
      secretHash: this.hasher.hex(secret),
      name,
    });
    if (actor)
      await this.audit?.record({ type: 'api_key.created', actor, subject: keyId, detail: { app_id: appId, name } });
    return { apiKey, record };
  }

  /** The key a request presented (parsed once, see parseApiKey): its app, or null when unknown, wrong or revoked. */
  async verify(parsed: ParsedApiKey): Promise<VerifiedKey | null> {
    const record = await this.store.find(parsed.keyId);
    const matches = this.hasher.matches(parsed.secret, record?.secretHash ?? NO_HASH);
    if (!record || !matches || record.revokedAt) return null;
    this.lastUse.record(record.id);
    return { keyId: record.id, appId: record.appId, appDisabled: record.appDisabledAt !== null };
  }

  /**
   * Disables or enables an app here (idempotent): while disabled its API keys get 401 and its webhook
   * endpoints are not delivered to, on every replica at once (the keys' cached rows are dropped through the bus).
   */
  async setAppDisabled(appId: string, disabled: boolean, actor?: AuditActor): Promise<Date | null> {
    const { disabledAt } = await this.store.setAppDisabled(appId, disabled);
    if (actor)
      await this.audit?.record({ type: disabled ? 'app.disabled' : 'app.enabled', actor, subject: appId, detail: {} });
    return disabledAt;
  }

  async revoke(keyId: string, actor?: AuditActor): Promise<ApiKeyRecord | null> {
    const record = await this.store.revoke(keyId);
    if (record && actor)
      await this.audit?.record({ type: 'api_key.revoked', actor, subject: keyId, detail: { app_id: record.appId } });
    return record;
  }
}
