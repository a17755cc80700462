import { hashPassword, needsRehash } from '../kernel/crypto';
import type { User } from '../kernel/user-store';
import type { KernelServices } from '../kernel/services';

/**
 * After a successful password sign-in: a hash made at a lower cost than PASSWORD_HASH_COST (e.g. the
 * N=2^14 of earlier versions) is replaced by one at the current cost, only if it is still the stored
 * one (a password changed meanwhile is never overwritten with the old one). A failure is logged; the
 * sign-in goes on, and the next one tries again.
 */
export async function upgradePasswordHash(
  ctx: Pick<KernelServices, 'config' | 'users' | 'logger'>,
  user: Pick<User, 'id' | 'passwordHash'>,
  password: string,
): Promise<void> {
  const cost = ctx.config.PASSWORD_HASH_COST;
  if (!user.passwordHash || !needsRehash(user.passwordHash, cost)) return;
  try {
    const upgraded = await ctx.users.replacePasswordHash(
      user.id,
      user.passwordHash,
      await hashPassword(password, cost),
    );
    if (upgraded) ctx.logger.info('password hash upgraded', { user_id: user.id, cost });
  } catch (err) {
    ctx.logger.warn('password hash not upgraded', { user_id: user.id, error: (err as Error).message });
  }
}
