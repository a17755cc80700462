import type { Request, RequestHandler, Response } from 'express';
import {
  clientAddress,
  credentialFailureLimiter,
  credentialKeysOf,
  FailureLimiter,
  refuseWhileBlocked,
  type Cache,
  type FailureKeys,
} from '@attest/common';
import type { IdentityConfig } from '../config';
import { APP_ID } from './ids';

/** The failure limiters of the identity service; counts live in Redis when it is configured. */
export interface IdentityLimits {
  /** Wrong client secrets at /token and /introspect. */
  credentials: FailureLimiter;
  /**
   * Failed code exchanges at /token: of a client that authenticated with its secret, per client (only it
   * can send them); of a public client (no secret: anyone can send them), per (client, address) and per
   * address, so nobody can block the others who use that client.
   */
  codes: FailureLimiter;
  /** Wrong passwords at /signin: per (username, address), so nobody can lock a user out from everywhere. */
  signIn: FailureLimiter;
  /** Failed passkey assertions at /signin, per address (the credential names no user before it is verified). */
  passkeys: FailureLimiter;
  /** Sign-ups started at /signup (a username checked, whatever the answer), per address. */
  signUps: FailureLimiter;
  /** Wrong user codes at /device (RFC 8628 §5.1: a short code is guessable), per address. */
  userCodes: FailureLimiter;
}

export function identityLimits(cache: Cache, config: IdentityConfig): IdentityLimits {
  const windowSeconds = config.AUTH_FAILURE_WINDOW_SECONDS;
  return {
    credentials: credentialFailureLimiter(cache, config),
    codes: new FailureLimiter(cache, 'codes', [
      { name: 'per-client-codes', limit: config.CODE_FAILURES_PER_CLIENT, windowSeconds },
      {
        name: 'per-public-client-and-address-codes',
        limit: config.PUBLIC_CODE_FAILURES_PER_CLIENT_AND_ADDRESS,
        windowSeconds,
      },
      { name: 'per-address-codes', limit: config.PUBLIC_CODE_FAILURES_PER_ADDRESS, windowSeconds },
    ]),
    signIn: new FailureLimiter(cache, 'signin', [
      { name: 'per-user-and-address', limit: config.SIGNIN_FAILURES_PER_USER_AND_ADDRESS, windowSeconds },
      { name: 'per-address', limit: config.SIGNIN_FAILURES_PER_ADDRESS, windowSeconds },
    ]),
    passkeys: new FailureLimiter(cache, 'passkeys', [
      { name: 'per-address-passkeys', limit: config.PASSKEY_FAILURES_PER_ADDRESS, windowSeconds },
    ]),
    signUps: new FailureLimiter(cache, 'signup', [
      { name: 'per-address-signups', limit: config.SIGNUP_ATTEMPTS_PER_ADDRESS, windowSeconds },
    ]),
    userCodes: new FailureLimiter(cache, 'user-codes', [
      { name: 'per-address-user-codes', limit: config.DEVICE_CODE_FAILURES_PER_ADDRESS, windowSeconds },
    ]),
  };
}

function decodeFormComponent(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

/** The `sub` of a client assertion, unverified: the app it claims to be (private_key_jwt). */
function assertionSubject(assertion: unknown): unknown {
  if (typeof assertion !== 'string') return undefined;
  try {
    return (JSON.parse(Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown })
      .sub;
  } catch {
    return undefined;
  }
}

/**
 * The client id a request claims (Basic header, else client_id in the form, else a client assertion's
 * sub), when it has an app id's shape.
 */
export function claimedClientId(req: Request): string | undefined {
  const header = req.get('authorization');
  const body = req.body as Record<string, unknown> | undefined;
  let id: unknown = body?.client_id ?? assertionSubject(body?.client_assertion);
  if (header && /^Basic\s/i.test(header)) {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    id = decodeFormComponent(decoded.slice(0, Math.max(decoded.indexOf(':'), 0)));
  }
  return typeof id === 'string' && APP_ID.test(id) ? id : undefined;
}

/** Refuses a client id or address at its limit of wrong secrets, before the secret is checked. */
export const refuseBlockedClient = (limits: IdentityLimits): RequestHandler =>
  refuseWhileBlocked(limits.credentials, credentialKeysOf(claimedClientId));

/**
 * Refuses a client at its limit of failed code exchanges, before the code is looked up: an authenticated
 * client by its id, a public client by (its id, the address) and by the address.
 */
export const refuseBlockedCodes = (limits: IdentityLimits): RequestHandler =>
  refuseWhileBlocked(limits.codes, (req, res: Response): FailureKeys => {
    const app = res.locals.app as { id: string; public: boolean };
    if (!app.public) return { 'per-client-codes': app.id };
    const address = clientAddress(req);
    return { 'per-public-client-and-address-codes': `${app.id}|${address}`, 'per-address-codes': address };
  });

export const signInKeys = (req: Request, username: string): FailureKeys => {
  const address = clientAddress(req);
  return { 'per-user-and-address': `${username.toLowerCase()}|${address}`, 'per-address': address };
};

/** The key of a per-address limit. */
export const addressKeys = (req: Request, policy: string): FailureKeys => ({ [policy]: clientAddress(req) });
