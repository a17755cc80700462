import type { AuditActor, AuditLog, Logger } from '@attest/common';
import type { ApiKeyRecord, ApiKeyStore } from './api-key-store';
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

  /** The record of a presented key id (its secret not yet checked), or null. */
  find(keyId: string): Promise<ApiKeyRecord | null> {
    return this.store.find(keyId);
  }

  /**
   * Checks the key a request presented (parsed once, see parseApiKey) against its record, synchronously
   * (so a failure limit can check and count in one tick): its app, or null when unknown, wrong or revoked.
   */
  check(parsed: ParsedApiKey, record: ApiKeyRecord | null): VerifiedKey | null {
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

  /** The key a request presented: its app, or null when unknown, wrong or revoked (no failure limit). */
  async verify(parsed: ParsedApiKey): Promise<VerifiedKey | null> {
    return this.check(parsed, await this.find(parsed.keyId));
  }

  async revoke(keyId: string, actor?: AuditActor): Promise<ApiKeyRecord | null> {
    const record = await this.store.revoke(keyId);
    if (record && actor)
      await this.audit?.record({ type: 'api_key.revoked', actor, subject: keyId, detail: { app_id: record.appId } });
    return record;
  }
}
