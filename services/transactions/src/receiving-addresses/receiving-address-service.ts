import { randomBytes } from 'node:crypto';
import {
  AppError,
  errors,
  LocalCache,
  type AuditActor,
  type AuditLog,
  type Db,
  type InvalidationBus,
  type Queryable,
} from '@attest/common';
import type { SignatureVerifier } from './signature-verifier';
import {
  receivingAddressStore,
  type AddressChallenge,
  type ReceivingAddress,
  type ReceivingAddressProof,
} from './receiving-address-store';

/** How long a challenge may be signed: ten minutes. */
export const CHALLENGE_TTL_MS = 10 * 60 * 1000;

const newChallengeId = () => `rac_${randomBytes(16).toString('hex')}`;

/** The text an address signs (EIP-191 personal_sign, or its EIP-191 hash for EIP-1271): it names what it proves. */
export const challengeMessage = (c: Omit<AddressChallenge, 'message'>) =>
  [
    'Attest: prove a receiving address',
    '',
    `I hold ${c.address} and receive payments at it for app ${c.appId} on ${c.chain}.`,
    '',
    `App: ${c.appId}`,
    `Chain: ${c.chain}`,
    `Address: ${c.address}`,
    `Challenge: ${c.id}`,
    `Expires: ${c.expiresAt.toISOString()}`,
  ].join('\n');

/** 403 receiving_address_not_registered: `field` (to) is not one of the app's receiving addresses on the chain. */
export const notReceivingAddress = (field: string, chain: string, address: string) =>
  new AppError(
    'receiving_address_not_registered',
    403,
    `${field} (${address}) is not one of this app's receiving addresses on ${chain}: add it first (prove it with a ` +
      'signed challenge at /api/v2/client/receiving-addresses, or ask the operator).',
    field,
  );

/** 409 receiving_address_taken: another app holds (chain, address). */
const addressTaken = (chain: string, address: string) =>
  errors.conflict(
    'receiving_address_taken',
    `address ${address} on ${chain} is another app's receiving address; one app receives at an address.`,
    'address',
  );

/**
 * The addresses each app receives payments at, per chain: one app per (chain, address). Added by an operator,
 * or proven by the address's signature of a single-use challenge bound to the app, the chain and the address;
 * listed and removed. Every change is audited in its own database transaction. The check the payment paths
 * make is `isReceivingAddress` (or `requireReceivingAddress`, which throws 403).
 */
export class ReceivingAddressService {
  private readonly audit?: Pick<AuditLog, 'record'>;
  /**
   * The owner of each (chain, address) as read (null: nobody's), for the checks outside a transaction: x402's
   * verify makes one per request. Dropped here and on every replica when an address is added or removed, with a
   * TTL as the backstop for a missed message (LocalCache: not trusted past 1 s while the bus is down).
   */
  private readonly owners?: LocalCache<string>;

  constructor(
    private readonly db: Db,
    private readonly verifier: SignatureVerifier,
    options: {
      audit?: Pick<AuditLog, 'record'>;
      /** The chains an address may be added on (CHAIN_TOKENS' names); any when not given. */
      chains?: readonly string[];
      /** Keeps the owners in memory, invalidated through the bus; read from the database each time without. */
      bus?: InvalidationBus;
    } = {},
  ) {
    this.audit = options.audit;
    this.chains = options.chains;
    if (options.bus)
      this.owners = new LocalCache<string>(options.bus, { name: 'receiving-addresses', ttlMs: 60000, max: 10000 });
  }

  private readonly chains?: readonly string[];

  private store = (db: Queryable = this.db) => receivingAddressStore(db);

  /** Whether (chain, address) is the app's receiving address; `db` may be the caller's transaction. */
  async isReceivingAddress(appId: string, chain: string, address: string, db?: Queryable): Promise<boolean> {
    return (await this.ownerOf(chain, address, db)) === appId;
  }

  /** The app that receives at (chain, address), or null. */
  async ownerOf(chain: string, address: string, db?: Queryable): Promise<string | null> {
    const c = chain.toLowerCase();
    const a = address.toLowerCase();
    // in the caller's transaction: what that transaction sees
    if (db || !this.owners) return this.store(db).ownerOf(c, a);
    return this.owners.get(ownerKey(c, a), () => this.store().ownerOf(c, a));
  }

  /** Throws 403 receiving_address_not_registered naming `field` unless (chain, address) is the app's. */
  async requireReceivingAddress(appId: string, chain: string, address: string, field = 'to'): Promise<void> {
    if (!(await this.isReceivingAddress(appId, chain, address))) throw notReceivingAddress(field, chain, address);
  }

  async list(appId: string, chain?: string): Promise<ReceivingAddress[]> {
    return this.store().listForApp(appId, chain?.toLowerCase());
  }

  private checkChain(chain: string): void {
    if (this.chains && !this.chains.includes(chain))
      throw errors.invalidParameter('chain', `chain must be one of: ${this.chains.join(', ')}.`);
  }

  /** Adds it with its audit event; 409 receiving_address_taken when another app holds it. */
  private async add(
    appId: string,
    chain: string,
    address: string,
    proof: ReceivingAddressProof,
    actor: AuditActor,
  ): Promise<{ address: ReceivingAddress; added: boolean }> {
    const result = await this.db.transaction(async (tx) => {
      const result = await this.store(tx).add(appId, chain, address, proof);
      if (!result) throw addressTaken(chain, address);
      if (result.added)
        await this.audit?.record(
          { type: 'receiving_address.added', actor, subject: appId, detail: { app_id: appId, chain, address, proof } },
          tx,
        );
      return result;
    });
    if (result.added) await this.owners?.invalidate(ownerKey(chain, address));
    return result;
  }

  /** An operator adds (chain, address) to the app (no proof asked); again for the same app: `added` false. */
  async addByOperator(appId: string, chain: string, address: string, actor: AuditActor) {
    const c = chain.toLowerCase();
    this.checkChain(c);
    return this.add(appId, c, address.toLowerCase(), 'operator', actor);
  }

  /**
   * A challenge for the app to sign with (chain, address), valid CHALLENGE_TTL_MS; expired ones are deleted
   * as a new one is made. 409 receiving_address_taken when another app holds the address already.
   */
  async challenge(appId: string, chain: string, address: string, now = new Date()): Promise<AddressChallenge> {
    const c = chain.toLowerCase();
    const a = address.toLowerCase();
    this.checkChain(c);
    const owner = await this.ownerOf(c, a);
    if (owner && owner !== appId) throw addressTaken(c, a);
    const base = {
      id: newChallengeId(),
      appId,
      chain: c,
      address: a,
      expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS),
    };
    const challenge = { ...base, message: challengeMessage(base) };
    await this.store().deleteExpiredChallenges(now);
    await this.store().insertChallenge(challenge);
    return challenge;
  }

  /**
   * Adds the address of the app's challenge `challengeId` when `signature` is that address's signature of the
   * challenge's message (EIP-191, or EIP-1271 for a contract). The challenge is used by this call whatever
   * its outcome: 400 invalid_challenge (unknown, another app's, or used), challenge_expired, invalid_signature.
   */
  async prove(appId: string, challengeId: string, signature: string, actor: AuditActor) {
    const challenge = await this.store().takeChallenge(appId, challengeId);
    if (!challenge)
      throw new AppError(
        'invalid_challenge',
        400,
        'challenge_id is not an unused challenge of this app; ask for a new one (each is used once).',
        'challenge_id',
      );
    if (challenge.expiresAt.getTime() <= Date.now())
      throw new AppError(
        'challenge_expired',
        400,
        `challenge_id expired at ${challenge.expiresAt.toISOString()}; ask for a new one and sign it within ${CHALLENGE_TTL_MS / 60000} minutes.`,
        'challenge_id',
      );
    const proof = await this.verifier.verify(challenge.chain, challenge.address, challenge.message, signature);
    if (!proof)
      throw new AppError(
        'invalid_signature',
        400,
        `signature is not ${challenge.address}'s signature of the challenge's message (EIP-191 personal_sign by the account, or EIP-1271 by a contract).`,
        'signature',
      );
    return this.add(appId, challenge.chain, challenge.address, proof, actor);
  }

  /** Removes the app's (chain, address) with its audit event; 404 when the app does not hold it. */
  async remove(appId: string, chain: string, address: string, actor: AuditActor): Promise<ReceivingAddress> {
    const c = chain.toLowerCase();
    const a = address.toLowerCase();
    const removed = await this.db.transaction(async (tx) => {
      const removed = await this.store(tx).remove(appId, c, a);
      if (!removed) throw errors.notFound(`address ${a} is not this app's receiving address on ${c}.`, 'address');
      await this.audit?.record(
        {
          type: 'receiving_address.removed',
          actor,
          subject: appId,
          detail: { app_id: appId, chain: c, address: a, proof: removed.proof },
        },
        tx,
      );
      return removed;
    });
    await this.owners?.invalidate(ownerKey(c, a));
    return removed;
  }
}

const ownerKey = (chain: string, address: string) => `${chain}\n${address}`;
