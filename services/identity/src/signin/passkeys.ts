import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { createHmac } from 'node:crypto';
import { constantTimeEqual, type Cache } from '@attest/common';
import type { Passkey, PasskeyStore } from './passkey-store';
import { newOpaqueId } from '../kernel/ids';

/**
 * A started WebAuthn ceremony: its challenge and what it is bound to (an interaction, the account
 * page of one session), plus, for sign-up, the account it will create.
 */
export interface Ceremony {
  kind: 'signup' | 'signin' | 'add';
  challenge: string;
  binding: string;
  account?: { userId: string; username: string; name: string | null };
}

export interface RelyingParty {
  id: string;
  name: string;
  origin: string;
  ttlSeconds: number;
  /**
   * PASSKEY_USER_VERIFICATION: 'required' (the default) asks every authenticator to verify the user (PIN,
   * biometric) and refuses an answer without the UV flag, so a stolen authenticator alone signs nobody in;
   * 'preferred' accepts one without, and the session's amr says so (['hwk'] instead of ['hwk', 'user']).
   */
  userVerification: 'required' | 'preferred';
}

/** Why a ceremony failed; each has its own message on the page. */
export type PasskeyFailure =
  'expired' | 'unknown_credential' | 'not_verified' | 'already_registered' | 'username_taken';

export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: PasskeyFailure };

/** The ceremonies that are not stored until they are posted. */
type UnstoredKind = Exclude<Ceremony['kind'], 'signup'>;

export type NewPasskey = Parameters<PasskeyStore['insert']>[0];

const fail = <T>(failure: PasskeyFailure): Outcome<T> => ({ ok: false, failure });

type WebAuthn = typeof import('@simplewebauthn/server');
let webauthnModule: Promise<WebAuthn> | undefined;
/**
 * @simplewebauthn/server (with its ASN.1 and COSE parsers, about 6 MB of memory), loaded at the first
 * passkey ceremony: a deployment whose users never use passkeys never loads it.
 */
const webauthn = (): Promise<WebAuthn> => (webauthnModule ??= import('@simplewebauthn/server'));

/** RFC 8176 methods for a passkey: `hwk` always, `user` when the authenticator verified the user. */
export const passkeyAmr = (userVerified: boolean): string[] => (userVerified ? ['hwk', 'user'] : ['hwk']);

/** The posted credential (JSON from the browser), or null when it is not one. */
export function parseCredential<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(
  raw: unknown,
): T | null {
  if (typeof raw !== 'string' || raw.length > 20000) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const ok =
    typeof v.id === 'string' &&
    typeof v.rawId === 'string' &&
    v.type === 'public-key' &&
    typeof v.response === 'object' &&
    v.response !== null;
  return ok ? (value as T) : null;
}

/**
 * Sign-up challenges (with the account they will create) live in the cache for a few minutes and are
 * taken once: a second use finds nothing; they are started only by a sign-up, which is limited per address.
 * Sign-in and add-a-passkey challenges are offered on every render of the sign-in and account pages
 * (the sign-in page to anyone), so they are not parked: the ceremony id carries a nonce, its expiry and
 * a MAC of both with its kind and binding, the challenge is derived from them with the service secret,
 * and the cache remembers only that a ceremony was used, once it is posted (a sign-in then counts
 * against the passkey failure limit; adding one needs a recent authentication). A page reloaded any
 * number of times holds no memory.
 */
export class PasskeyCeremonies {
  constructor(
    private readonly cache: Cache,
    private readonly ttlSeconds: number,
    /** The service secret (IDENTITY_SECRET): sign-in ceremony ids and challenges are derived with it. */
    private readonly secret: string,
  ) {}

  private mac(purpose: string, data: string): Buffer {
    return createHmac('sha256', this.secret).update(`webauthn-${purpose}:${data}`).digest();
  }

  /** A sign-in or add ceremony, nothing stored: its id (64 hex: nonce, expiry, MAC) and its challenge. */
  startUnstored(kind: UnstoredKind, binding: string): { id: string; challenge: Uint8Array<ArrayBuffer> } {
    const nonce = newOpaqueId().slice(0, 24);
    const expires = (Math.floor(Date.now() / 1000) + this.ttlSeconds).toString(16).padStart(8, '0');
    const id = nonce + expires + this.mac(kind, `${binding}:${nonce}${expires}`).toString('hex').slice(0, 32);
    return { id, challenge: new Uint8Array(this.mac('challenge', nonce + expires)) };
  }

  /** The sign-in or add ceremony `id`, once, if its MAC holds for this kind and binding and it has not expired. */
  private async takeUnstored(id: string, kind: UnstoredKind, binding: string): Promise<Ceremony | null> {
    const nonce = id.slice(0, 24);
    const expires = id.slice(24, 32);
    const expected = this.mac(kind, `${binding}:${nonce}${expires}`).toString('hex').slice(0, 32);
    if (!constantTimeEqual(expected, id.slice(32))) return null;
    const left = parseInt(expires, 16) * 1000 - Date.now();
    if (left <= 0) return null;
    if (!(await this.cache.setIfAbsent(`webauthn-used:${nonce}`, '1', left))) return null;
    const challenge = this.mac('challenge', nonce + expires).toString('base64url');
    return { kind, challenge, binding };
  }

  async start(ceremony: Ceremony): Promise<string> {
    const id = newOpaqueId();
    await this.cache.set(`webauthn:${id}`, JSON.stringify(ceremony), this.ttlSeconds * 1000);
    return id;
  }

  /** The ceremony, once, if it is of this kind and bound to this binding. */
  async take(id: unknown, kind: Ceremony['kind'], binding: string): Promise<Ceremony | null> {
    if (typeof id !== 'string' || !/^[0-9a-f]{64}$/.test(id)) return null;
    if (kind !== 'signup') return this.takeUnstored(id, kind, binding);
    const raw = await this.cache.take(`webauthn:${id}`);
    const ceremony = raw ? (JSON.parse(raw) as Ceremony) : null;
    return ceremony && ceremony.kind === kind && ceremony.binding === binding ? ceremony : null;
  }
}

/** Passkey registration and sign-in over @simplewebauthn/server; the routes only carry the JSON. */
export class Passkeys {
  constructor(
    private readonly store: PasskeyStore,
    private readonly ceremonies: PasskeyCeremonies,
    private readonly rp: RelyingParty,
    /** Removes one unless it is the account's last credential, decided inside the write (passkey-store.ts). */
    private readonly removeKeepingOne: (
      userId: string,
      id: string,
    ) => Promise<'removed' | 'not_found' | 'last_credential'>,
  ) {}

  listForUser(userId: string): Promise<Passkey[]> {
    return this.store.listForUser(userId);
  }

  insert(passkey: NewPasskey): Promise<boolean> {
    return this.store.insert(passkey);
  }

  /** Removes the passkey unless it is the last way the user can sign in (no password, no other passkey). */
  removeUnlessLast(userId: string, id: string): Promise<'removed' | 'not_found' | 'last_credential'> {
    return this.removeKeepingOne(userId, id);
  }

  /** Creation options for a discoverable credential; existing passkeys of the account are excluded. */
  async registrationOptions(
    kind: 'signup' | 'add',
    binding: string,
    account: NonNullable<Ceremony['account']>,
  ): Promise<{ ceremony: string; options: PublicKeyCredentialCreationOptionsJSON }> {
    const existing = kind === 'add' ? await this.store.listForUser(account.userId) : [];
    const { generateRegistrationOptions } = await webauthn();
    // adding a passkey: nothing is stored until the ceremony is posted (see PasskeyCeremonies)
    const { id, challenge } = kind === 'add' ? this.ceremonies.startUnstored('add', binding) : { id: '' };
    const options = await generateRegistrationOptions({
      ...(challenge ? { challenge } : {}),
      rpName: this.rp.name,
      rpID: this.rp.id,
      userName: account.username,
      userDisplayName: account.name ?? account.username,
      userID: new TextEncoder().encode(account.userId),
      timeout: this.rp.ttlSeconds * 1000,
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
      authenticatorSelection: {
        residentKey: 'required',
        requireResidentKey: true,
        userVerification: this.rp.userVerification,
      },
    });
    if (kind === 'add') return { ceremony: id, options };
    const ceremony = await this.ceremonies.start({ kind, challenge: options.challenge, binding, account });
    return { ceremony, options };
  }

  /** Request options with no allowed list: the authenticator offers the user's discoverable passkeys. */
  async authenticationOptions(
    binding: string,
  ): Promise<{ ceremony: string; options: PublicKeyCredentialRequestOptionsJSON }> {
    const { generateAuthenticationOptions } = await webauthn();
    // nothing is stored until the ceremony is posted (see PasskeyCeremonies)
    const { id, challenge } = this.ceremonies.startUnstored('signin', binding);
    const options = await generateAuthenticationOptions({
      rpID: this.rp.id,
      timeout: this.rp.ttlSeconds * 1000,
      userVerification: this.rp.userVerification,
      challenge,
    });
    return { ceremony: id, options };
  }

  /**
   * Verifies a new credential against its ceremony (taken, so never twice). `store` saves it: for
   * sign-up, together with the new account; it answers a failure, or null once saved. Adding one is for
   * `owner`, the signed-in account (the ceremony's binding is that session's account-page token).
   */
  async register(
    kind: 'signup' | 'add',
    ceremonyId: unknown,
    binding: string,
    response: RegistrationResponseJSON | null,
    name: string,
    store: (account: NonNullable<Ceremony['account']>, passkey: NewPasskey) => Promise<PasskeyFailure | null>,
    owner?: NonNullable<Ceremony['account']>,
  ): Promise<Outcome<{ account: NonNullable<Ceremony['account']>; userVerified: boolean }>> {
    const taken = await this.ceremonies.take(ceremonyId, kind, binding);
    const account = kind === 'add' ? owner : taken?.account;
    if (!taken || !account) return fail('expired');
    const ceremony = { ...taken, account };
    if (!response) return fail('not_verified');
    const { verifyRegistrationResponse } = await webauthn();
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: ceremony.challenge,
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.id,
        requireUserVerification: this.rp.userVerification === 'required',
      });
    } catch {
      return fail('not_verified');
    }
    if (!verified.verified) return fail('not_verified');
    const { credential, userVerified } = verified.registrationInfo;
    const passkey = {
      id: credential.id,
      userId: ceremony.account.userId,
      publicKey: credential.publicKey,
      counter: credential.counter,
      transports: credential.transports ?? [],
      name,
    };
    const failure = await store(ceremony.account, passkey);
    if (failure) return fail(failure);
    return { ok: true, value: { account: ceremony.account, userVerified } };
  }

  /** Verifies a sign-in assertion: the ceremony (taken once), a known credential, its signature and counter. */
  async authenticate(
    ceremonyId: unknown,
    binding: string,
    response: AuthenticationResponseJSON | null,
  ): Promise<Outcome<{ userId: string; userVerified: boolean }>> {
    const ceremony = await this.ceremonies.take(ceremonyId, 'signin', binding);
    if (!ceremony) return fail('expired');
    if (!response) return fail('not_verified');
    const passkey = await this.store.find(response.id);
    if (!passkey) return fail('unknown_credential');
    const { verifyAuthenticationResponse } = await webauthn();
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: ceremony.challenge,
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.id,
        credential: {
          id: passkey.id,
          publicKey: passkey.publicKey,
          counter: passkey.counter,
          transports: passkey.transports,
        },
        requireUserVerification: this.rp.userVerification === 'required',
      });
    } catch {
      return fail('not_verified');
    }
    if (!verified.verified) return fail('not_verified');
    await this.store.recordUse(passkey.id, verified.authenticationInfo.newCounter);
    return { ok: true, value: { userId: passkey.userId, userVerified: verified.authenticationInfo.userVerified } };
  }
}
