import { LocalCache, type InvalidationBus } from '@attest/common';
import type { App, AppLogoutSettings, AppStore, AppUpdate } from './app-store';
import type { ConsentStore } from './consent-store';
import type { SubjectStore } from './subject-store';
import type { NewUser, RemovedUser, User, UserStore, UserUpdate } from './user-store';

/**
 * Read-mostly identity rows from process memory, the database behind them. Every write goes through
 * these classes and invalidates after it committed: here at once, on other replicas through the bus.
 * The TTL is only the backstop for a lost message; while the bus is down, LocalCache trusts nothing
 * older than a second, so a disabled app or a withdrawn consent stops working everywhere within 1 s.
 */
const TTL_MS = 30000;

/**
 * Apps whose record lives elsewhere (issue 41: a Client ID Metadata Document at an https client_id): the
 * registration feature fetches and checks the document and keeps its app row; the directory asks it when
 * the row it holds is missing or stale (metadataExpiresAt passed), and never for a disabled app.
 */
export interface ExternalClients {
  handles(id: string): boolean;
  /**
   * The app as its document says now (the row written), or null; `known` is the row held until now; `from`,
   * the address of the request that named it (a first fetch is limited per address).
   */
  resolve(id: string, known: App | null, from?: string): Promise<App | null>;
}

/** Apps by client id, frozen: the parsed client record every request shares. */
export class AppDirectory {
  private readonly cache: LocalCache<App>;

  constructor(
    private readonly store: AppStore,
    bus: InvalidationBus,
    private readonly external?: ExternalClients,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new LocalCache(bus, { name: 'apps', ttlMs: TTL_MS, max: 10000 });
  }

  /** `from`: the address of the anonymous request that named the client, when there is one. */
  async find(id: string, from?: string): Promise<App | null> {
    if (!this.external?.handles(id)) return this.stored(id);
    const known = await this.stored(id);
    if (known && (known.disabledAt || (known.metadataExpiresAt && known.metadataExpiresAt.getTime() > this.now())))
      return known;
    const resolved = await this.external.resolve(id, known, from);
    await this.cache.invalidate(id);
    return resolved && this.stored(id);
  }

  private stored(id: string): Promise<App | null> {
    return this.cache.get(id, async () => {
      const app = await this.store.find(id);
      return (
        app &&
        Object.freeze({
          ...app,
          redirectUris: Object.freeze([...app.redirectUris]) as string[],
          postLogoutRedirectUris: Object.freeze([...app.postLogoutRedirectUris]) as string[],
          webOrigins: Object.freeze([...app.webOrigins]) as string[],
        })
      );
    });
  }

  list(q: { after?: string; limit: number }): Promise<App[]> {
    return this.store.list(q);
  }

  /** After a write made outside this class (a registration's own store). */
  invalidate(id: string): Promise<void> {
    return this.cache.invalidate(id);
  }

  async update(id: string, changes: AppUpdate): Promise<App | null> {
    const app = await this.store.update(id, changes);
    await this.cache.invalidate(id);
    return app;
  }

  /** Whether an enabled app registered this web origin (CORS preflights of /token; not a hot path). */
  originRegistered(origin: string): Promise<boolean> {
    return this.store.originRegistered(origin);
  }

  async insert(app: Parameters<AppStore['insert']>[0]): Promise<App> {
    const created = await this.store.insert(app);
    await this.cache.invalidate(created.id);
    return created;
  }

  async setLogoutSettings(id: string, settings: AppLogoutSettings): Promise<App | null> {
    const app = await this.store.setLogoutSettings(id, settings);
    await this.cache.invalidate(id);
    return app;
  }

  async setSecretHash(id: string, secretHash: string): Promise<boolean> {
    const found = await this.store.setSecretHash(id, secretHash);
    await this.cache.invalidate(id);
    return found;
  }

  async setDisabled(id: string, disabled: boolean): Promise<App | null> {
    const app = await this.store.setDisabled(id, disabled);
    await this.cache.invalidate(id);
    return app;
  }
}

/** Users by id (what /userinfo and /authorize read); sign-in by username goes to the database. */
export class UserDirectory {
  private readonly cache: LocalCache<User>;

  constructor(
    private readonly store: UserStore,
    bus: InvalidationBus,
  ) {
    this.cache = new LocalCache(bus, { name: 'users', ttlMs: TTL_MS, max: 50000 });
  }

  findById(id: string): Promise<User | null> {
    return this.cache.get(id, async () => {
      const user = await this.store.findById(id);
      return user && Object.freeze(user);
    });
  }

  findByUsername(username: string): Promise<User | null> {
    return this.store.findByUsername(username);
  }

  list(q: Parameters<UserStore['list']>[0]) {
    return this.store.list(q);
  }

  async insert(user: NewUser): Promise<User | null> {
    const created = await this.store.insert(user);
    await this.cache.invalidate(user.id);
    return created;
  }

  /** After a write made outside this class (a sign-up transaction). */
  invalidate(id: string): Promise<void> {
    return this.cache.invalidate(id);
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<boolean> {
    const found = await this.store.setPasswordHash(id, passwordHash);
    await this.cache.invalidate(id);
    return found;
  }

  /** Sets a new hash only while `previous` is still the stored one; true when it did. */
  async replacePasswordHash(id: string, previous: string, passwordHash: string): Promise<boolean> {
    const replaced = await this.store.replacePasswordHash(id, previous, passwordHash);
    if (replaced) await this.cache.invalidate(id);
    return replaced;
  }

  async update(id: string, changes: UserUpdate): Promise<User | null> {
    const user = await this.store.update(id, changes);
    await this.cache.invalidate(id);
    return user;
  }

  /** A disabled user cannot sign in, and their tokens stop working (active-grant.ts). */
  async setDisabled(id: string, disabled: boolean): Promise<User | null> {
    const user = await this.store.setDisabled(id, disabled);
    await this.cache.invalidate(id);
    return user;
  }

  /**
   * Deletes the user, their consents and subjects. The caller drops the consent and subject entries
   * (their directories own those caches); this drops the user, which alone already ends their tokens.
   */
  async remove(id: string): Promise<RemovedUser | null> {
    const removed = await this.store.remove(id);
    await this.cache.invalidate(id);
    return removed;
  }
}

/** Pairwise subject → user, per app. A subject is written once, not upserted on every sign-in. */
export class SubjectDirectory {
  private readonly cache: LocalCache<string>;

  constructor(
    private readonly store: SubjectStore,
    bus: InvalidationBus,
  ) {
    this.cache = new LocalCache(bus, { name: 'subjects', ttlMs: TTL_MS, max: 50000 });
  }

  userIdFor(appId: string, sub: string): Promise<string | null> {
    return this.cache.get(`${appId} ${sub}`, () => this.store.userIdFor(appId, sub));
  }

  /** After the rows were deleted (a user deleted): drop them here and on every replica. */
  async forget(subjects: { appId: string; sub: string }[]): Promise<void> {
    await Promise.all(subjects.map((s) => this.cache.invalidate(`${s.appId} ${s.sub}`)));
  }

  async remember(appId: string, sub: string, userId: string): Promise<void> {
    const key = `${appId} ${sub}`;
    if (this.cache.peek(key) === userId) return;
    // a new row: other replicas may hold an absence for it
    if (await this.store.remember(appId, sub, userId)) await this.cache.invalidate(key);
    this.cache.set(key, userId);
  }
}

/** Scopes a user granted an app. */
export class ConsentDirectory {
  private readonly cache: LocalCache<readonly string[]>;

  constructor(
    private readonly store: ConsentStore,
    bus: InvalidationBus,
    /**
     * Before a withdrawal: makes the app's tokens issued so far inactive for good, so approving the
     * app again does not revive them (Revocations.revokeBefore).
     */
    private readonly beforeWithdrawal: (userId: string, appId: string) => Promise<void> = async () => {},
  ) {
    this.cache = new LocalCache(bus, { name: 'consents', ttlMs: TTL_MS, max: 50000 });
  }

  async find(userId: string, appId: string): Promise<readonly string[]> {
    return (
      (await this.cache.get(`${userId} ${appId}`, async () => Object.freeze(await this.store.find(userId, appId)))) ??
      []
    );
  }

  async grant(userId: string, appId: string, scopes: string[]): Promise<void> {
    await this.store.grant(userId, appId, scopes);
    await this.cache.invalidate(`${userId} ${appId}`);
  }

  listForUser(userId: string): ReturnType<ConsentStore['listForUser']> {
    return this.store.listForUser(userId);
  }

  /** After the rows were deleted (a user deleted): drop them here and on every replica. */
  async forget(userId: string, appIds: string[]): Promise<void> {
    await Promise.all(appIds.map((appId) => this.cache.invalidate(`${userId} ${appId}`)));
  }

  /**
   * A resource deleted: no consent keeps its entries (`<uri>`, `<uri>#<scope>`), so a resource registered
   * again with the same uri asks each person again (a security review). Here and on every replica.
   */
  async removeResource(uri: string): Promise<void> {
    const changed = await this.store.removeResource(uri);
    await Promise.all(changed.map(({ userId, appId }) => this.cache.invalidate(`${userId} ${appId}`)));
  }

  /** False when there was nothing to withdraw. */
  async withdraw(userId: string, appId: string): Promise<boolean> {
    await this.beforeWithdrawal(userId, appId);
    const found = await this.store.withdraw(userId, appId);
    await this.cache.invalidate(`${userId} ${appId}`);
    return found;
  }
}
