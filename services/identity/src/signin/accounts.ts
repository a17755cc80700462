import type { Db } from '@attest/common';
import { passkeyStore } from './passkey-store';
import { userStore } from '../kernel/user-store';
import type { UserDirectory } from '../kernel/directories';
import type { Ceremony, NewPasskey, PasskeyFailure } from './passkeys';

class Refused extends Error {
  constructor(readonly failure: PasskeyFailure) {
    super(failure);
  }
}

/**
 * Self sign-up: the user (verification level `device`, no password) and its first passkey in one
 * transaction, so an account never exists without a way to sign in. `orb` is only ever set by an operator.
 */
export function passkeyAccounts(db: Db, users: Pick<UserDirectory, 'invalidate'>) {
  return async (account: NonNullable<Ceremony['account']>, passkey: NewPasskey): Promise<PasskeyFailure | null> => {
    try {
      await db.transaction(async (tx) => {
        const user = await userStore(tx).insert({
          id: account.userId,
          username: account.username,
          passwordHash: null,
          verificationLevel: 'device',
          name: account.name,
          givenName: null,
          familyName: null,
        });
        if (!user) throw new Refused('username_taken');
        if (!(await passkeyStore(tx).insert(passkey))) throw new Refused('already_registered');
      });
    } catch (err) {
      if (err instanceof Refused) return err.failure;
      throw err;
    }
    await users.invalidate(account.userId);
    return null;
  };
}
