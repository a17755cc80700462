import type { BackChannelLogout } from './backchannel-logout';
import type { Ceremony, NewPasskey, PasskeyFailure, Passkeys } from './passkeys';

/** The sign-in feature's services, built once in the composition root. */
export interface SignInServices {
  passkeys: Passkeys;
  /** Self sign-up: the new account and its first passkey, in one transaction. */
  createPasskeyAccount(account: NonNullable<Ceremony['account']>, passkey: NewPasskey): Promise<PasskeyFailure | null>;
  backChannelLogout: BackChannelLogout;
}
