import type { Request, Response } from 'express';
import { clientAddress } from '@attest/common';
import { describeUserAgent } from '../domain/device';
import type { Interaction } from '../domain/sessions';
import { proceed } from './authorization-flow';
import type { IdentityContext } from './context';
import { sessionCookieOf, setSessionCookie } from './session-cookie';

export interface SignedIn {
  interactionId: string;
  interaction: Interaction;
  userId: string;
  /** RFC 8176 authentication method references, e.g. ['pwd'] or ['hwk', 'user']. */
  amr: string[];
}

/**
 * Where every sign-in method ends once it has verified who the user is: a new session replaces the
 * browser's previous one (so no old cookie stays valid), the interaction is marked signed in, and the
 * authorization request moves on (consent, or back to the app). Answers the form POST with a 303.
 */
export async function completeSignIn(ctx: IdentityContext, req: Request, res: Response, signedIn: SignedIn): Promise<void> {
  const { cookie, session } = await ctx.sessions.rotate(sessionCookieOf(req), {
    userId: signedIn.userId,
    authTime: Math.floor(Date.now() / 1000),
    amr: signedIn.amr,
    device: describeUserAgent(req.get('user-agent')),
    address: clientAddress(req),
  });
  setSessionCookie(ctx, res, cookie);
  const updated = { ...signedIn.interaction, signedIn: true };
  await ctx.interactions.update(signedIn.interactionId, updated);
  await proceed(ctx, res, signedIn.interactionId, updated, session, 303);
}
