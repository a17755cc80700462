import type { Request } from 'express';
import { requestActor } from '@attest/common';
import { hmacHex } from '../kernel/crypto';
import type { KernelServices } from '../kernel/services';

/** What the person changed on the account page, and sign-up: each leaves an audit event with them as the actor. */
export type AccountEvent =
  'user.signed_up' | 'password.changed' | 'passkey.added' | 'passkey.removed' | 'consent.withdrawn' | 'session.ended';

export function recordAccountEvent(
  ctx: Pick<KernelServices, 'audit'>,
  req: Request,
  userId: string,
  type: AccountEvent,
  detail: Record<string, unknown> = {},
): Promise<void> {
  return ctx.audit.record({ type, actor: requestActor(req, 'user', userId), subject: userId, detail });
}

/**
 * A typed username that names no user is stored as this keyed hash, never as typed: people type
 * passwords into the username field. HMAC-SHA256 with IDENTITY_SECRET (a purpose prefix keeps it apart
 * from the secret's other uses): repeated attempts on one name still match, and nobody without the
 * secret can test guesses against the trail.
 */
export const typedUsernameHash = (ctx: Pick<KernelServices, 'config'>, typed: string): string =>
  hmacHex(ctx.config.secret, `audit-username:${typed}`);
