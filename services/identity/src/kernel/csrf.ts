import { createHmac, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import { constantTimeEqual } from '@attest/common';
import type { KernelServices } from './services';
import { cookieName, secureCookies } from './session-cookie';

export const CSRF_COOKIE = 'attest_csrf';

const mac = (ctx: Pick<KernelServices, 'config'>, browser: string, purpose: string) =>
  createHmac('sha256', ctx.config.secret).update(`csrf:${browser}:${purpose}`).digest('hex');

/**
 * Double-submit CSRF token: an HttpOnly browser cookie, and a form field that is its MAC bound to what
 * the form is for (an interaction id, or a fixed purpose such as "logout").
 */
export function csrfToken(ctx: Pick<KernelServices, 'config'>, req: Request, res: Response, purpose: string): string {
  let browser = (req.cookies as Record<string, string> | undefined)?.[cookieName(ctx, CSRF_COOKIE)];
  if (!browser || !/^[0-9a-f]{64}$/.test(browser)) {
    browser = randomBytes(32).toString('hex');
    res.cookie(cookieName(ctx, CSRF_COOKIE), browser, {
      httpOnly: true,
      secure: secureCookies(ctx),
      sameSite: 'lax',
      path: '/',
    });
  }
  return mac(ctx, browser, purpose);
}

export function csrfValid(
  ctx: Pick<KernelServices, 'config'>,
  req: Request,
  purpose: string,
  presented: string | undefined,
): boolean {
  const browser = (req.cookies as Record<string, string> | undefined)?.[cookieName(ctx, CSRF_COOKIE)];
  if (!browser || !presented) return false;
  return constantTimeEqual(mac(ctx, browser, purpose), presented);
}
