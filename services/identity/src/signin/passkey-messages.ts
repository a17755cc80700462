import type { PasskeyFailure } from './passkeys';

/** What the pages say when a passkey ceremony fails (shown in an alert, read out by screen readers). */
const MESSAGES: Record<PasskeyFailure, string> = {
  expired: 'That passkey request has expired or was already used. Try again.',
  unknown_credential: 'This passkey is not registered here. Sign in another way, or create an account.',
  not_verified: 'The passkey could not be verified. Try again.',
  already_registered: 'This passkey is already registered.',
  username_taken: 'That username is taken. Choose another.',
};

export const passkeyMessage = (failure: PasskeyFailure): string => MESSAGES[failure];
