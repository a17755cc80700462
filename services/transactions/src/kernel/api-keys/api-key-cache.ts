import { LocalCache, type InvalidationBus } from '@attest/common';
import type { ApiKeyRecord, ApiKeyStore } from './api-key-store';

export interface ApiKeyCacheOptions {
  /** Backstop for a missed invalidation; 0 reloads on every use. */
  ttlMs: number;
  max?: number;
}

/**
 * The API-key store with its rows in process memory (unknown ids too): `find` answers from memory
 * once warm; a write drops the row here at once and on every replica through the bus.
 */
export function cachedApiKeyStore(store: ApiKeyStore, bus: InvalidationBus, options: ApiKeyCacheOptions): ApiKeyStore {
  const rows = new LocalCache<ApiKeyRecord>(bus, { name: 'api-keys', ttlMs: options.ttlMs, max: options.max ?? 10000 });
  return {
    ...store,
    find: (id) => rows.get(id, () => store.find(id)),
    async insert(key) {
      const record = await store.insert(key);
      await rows.invalidate(record.id);
      return record;
    },
    async revoke(id) {
      const record = await store.revoke(id);
      await rows.invalidate(id);
      return record;
    },
    // the app's state is read with each key: disabling or enabling it drops its keys' rows everywhere
    async setAppDisabled(appId, disabled) {
      const result = await store.setAppDisabled(appId, disabled);
      await Promise.all(result.keyIds.map((id) => rows.invalidate(id)));
      return result;
    },
  };
}
