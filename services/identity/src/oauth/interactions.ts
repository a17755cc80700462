import { constantTimeEqual, type Cache } from '@attest/common';
import type { AuthorizationRequest } from './authorization-request';
import { newOpaqueId } from '../kernel/ids';

export interface Interaction {
  request: AuthorizationRequest;
  /**
   * A SHA-256 of the binding value of the browser that started it (authorization-flow.ts): only
   * that browser may continue it.
   */
  browser?: string;
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

  /** The interaction, if `browser` (the binding hash of the asking browser) is the one that started it. */
  async find(id: unknown, browser: string): Promise<Interaction | null> {
    if (typeof id !== 'string' || !/^[0-9a-f]{64}$/.test(id)) return null;
    const raw = await this.cache.get(`interaction:${id}`);
    if (!raw) return null;
    const interaction = JSON.parse(raw) as Interaction;
    return typeof interaction.browser === 'string' && constantTimeEqual(interaction.browser, browser)
      ? interaction
      : null;
  }

  async update(id: string, interaction: Interaction): Promise<void> {
    await this.cache.set(`interaction:${id}`, JSON.stringify(interaction), INTERACTION_TTL_MS);
  }

  /** Ends the interaction; true for exactly one caller. */
  async finish(id: string): Promise<boolean> {
    return (await this.cache.take(`interaction:${id}`)) !== null;
  }
}
