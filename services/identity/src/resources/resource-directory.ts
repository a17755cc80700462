import { LocalCache, type InvalidationBus } from '@attest/common';
import type { Resource, ResourceStore, ResourceUpdate } from './resource-store';

/** As the app directory: a write invalidates here at once and on other replicas through the bus. */
const TTL_MS = 30000;

/**
 * Registered resources from process memory (by uri for /authorize and /token, by id for /introspect's
 * authentication and the admin API), the database behind them.
 */
export class ResourceDirectory {
  private readonly cache: LocalCache<Resource>;

  constructor(
    private readonly store: ResourceStore,
    bus: InvalidationBus,
  ) {
    this.cache = new LocalCache(bus, { name: 'resources', ttlMs: TTL_MS, max: 10000 });
  }

  find(id: string): Promise<Resource | null> {
    return this.cache.get(`id:${id}`, async () => freeze(await this.store.find(id)));
  }

  findByUri(uri: string): Promise<Resource | null> {
    return this.cache.get(`uri:${uri}`, async () => freeze(await this.store.findByUri(uri)));
  }

  list(): Promise<Resource[]> {
    return this.store.list();
  }

  async insert(resource: Parameters<ResourceStore['insert']>[0]): Promise<Resource | null> {
    const created = await this.store.insert(resource);
    if (created) await this.forget(created);
    return created;
  }

  async update(id: string, changes: ResourceUpdate): Promise<Resource | null> {
    return this.forget(await this.store.update(id, changes));
  }

  async setSecretHash(id: string, secretHash: string): Promise<Resource | null> {
    return this.forget(await this.store.setSecretHash(id, secretHash));
  }

  async remove(id: string): Promise<Resource | null> {
    return this.forget(await this.store.remove(id));
  }

  private async forget(resource: Resource | null): Promise<Resource | null> {
    if (resource)
      await Promise.all([this.cache.invalidate(`id:${resource.id}`), this.cache.invalidate(`uri:${resource.uri}`)]);
    return resource;
  }
}

const freeze = (r: Resource | null): Resource | null =>
  r && Object.freeze({ ...r, scopes: Object.freeze([...r.scopes]) as string[] });
