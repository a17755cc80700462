import type { Cache } from '@attest/common';
import type { AuthorizationRequest } from './authorization-request';
import { newOpaqueId } from './ids';
import { sha256 } from './crypto';

export interface Session {
  userId: string;
  /** Seconds since the epoch, for auth_time and max_age. */
  authTime: number;
  /** RFC 8176 authentication method references of the sign-in, e.g. ['pwd']. */
  amr: string[];
}

/** Browser sessions in the cache, keyed by a hash of the cookie value (a stolen cache dump is no session). */
export class SessionStore {
  constructor(private readonly cache: Cache, private readonly ttlSeconds: number) {}

  async create(session: Session): Promise<string> {
    const id = newOpaqueId();
    await this.cache.set(`session:${sha256(id)}`, JSON.stringify(session), this.ttlSeconds * 1000);
    return id;
  }

  /** A sign-in: ends the browser's previous session, if any, then starts a new one (no old cookie stays valid). */
  async rotate(previousId: string | undefined, session: Session): Promise<string> {
    if (previousId) await this.destroy(previousId);
    return this.create(session);
  }

  async find(id: string | undefined): Promise<Session | null> {
    if (!id || !/^[0-9a-f]{64}$/.test(id)) return null;
    const raw = await this.cache.get(`session:${sha256(id)}`);
    return raw ? (JSON.parse(raw) as Session) : null;
  }

  async destroy(id: string): Promise<void> {
    await this.cache.del(`session:${sha256(id)}`);
  }
}

export interface Interaction {
  request: AuthorizationRequest;
  /** Set once the user signed in during this interaction (so prompt=login is not asked again). */
  signedIn?: boolean;
  /** Set once the user approved during this interaction (so prompt=consent is not asked again). */
  consented?: boolean;
}

const INTERACTION_TTL_MS = 15 * 60 * 1000;

/** A validated authorization request parked while the user signs in and consents. */
export class InteractionStore {
  constructor(private readonly cache: Cache) {}

  async create(interaction: Interaction): Promise<string> {
    const id = newOpaqueId();
    await this.cache.set(`interaction:${id}`, JSON.stringify(interaction), INTERACTION_TTL_MS);
    return id;
  }

  async find(id: unknown): Promise<Interaction | null> {
    if (typeof id !== 'string' || !/^[0-9a-f]{64}$/.test(id)) return null;
    const raw = await this.cache.get(`interaction:${id}`);
    return raw ? (JSON.parse(raw) as Interaction) : null;
  }

  async update(id: string, interaction: Interaction): Promise<void> {
    await this.cache.set(`interaction:${id}`, JSON.stringify(interaction), INTERACTION_TTL_MS);
  }

  /** Ends the interaction; true for exactly one caller. */
  async finish(id: string): Promise<boolean> {
    return (await this.cache.take(`interaction:${id}`)) !== null;
  }
}
