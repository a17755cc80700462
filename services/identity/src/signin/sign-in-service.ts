import type { Request, Response } from 'express';
import { clientAddress } from '@attest/common';
import { describeUserAgent } from './device';
import { type Interaction, proceed, type ProceedDeps } from '../oauth';
import { sessionCookieOf, setSessionCookie } from '../kernel/session-cookie';

/** Where a sign-in continues: the authorization request it belongs to, or the account page (no app). */
export type AfterSignIn =
  | { interactionId: string; interaction: Interaction }
  | { account: true }
  /** The device page (RFC 8628), back to the code the person typed. */
  | { device: string };

export type SignedIn = AfterSignIn & {
  userId: string;
  /** RFC 8176 authentication method references, e.g. ['pwd'] or ['hwk', 'user']. */
  amr: string[];
};

/**
 * Where every sign-in method (password, passkey, passkey sign-up) ends once it has verified who the
 * user is: a new session replaces the browser's previous one (so no old cookie stays valid), then the
 * authorization request moves on (consent, or back to the app) with the interaction marked signed in,
 * or the browser goes to the account page. Answers the form POST with a 303.
 */
export async function completeSignIn(ctx: ProceedDeps, req: Request, res: Response, signedIn: SignedIn): Promise<void> {
  const { cookie, session } = await ctx.sessions.rotate(sessionCookieOf(req, ctx), {
    userId: signedIn.userId,
    authTime: ctx.sessions.nowSeconds(),
    amr: signedIn.amr,
    device: describeUserAgent(req.get('user-agent')),
    address: clientAddress(req),
  });
  setSessionCookie(ctx, res, cookie);
  if ('account' in signedIn) return res.redirect(303, '/account');
  if ('device' in signedIn)
    return res.redirect(303, `/device?${new URLSearchParams({ user_code: signedIn.device }).toString()}`);
  const updated = { ...signedIn.interaction, signedIn: true };
  await ctx.interactions.update(signedIn.interactionId, updated);
  await proceed(ctx, res, signedIn.interactionId, updated, session, 303);
}
