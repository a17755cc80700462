import { errors, type AppError } from '@attest/common';

let common: Promise<ReadonlySet<string>> | undefined;

/**
 * The ~49,000 most common passwords of the breach corpora zxcvbn-ts ships offline
 * (@zxcvbn-ts/language-common, `passwords-common`, lower case). Loaded at the first password set,
 * not with the service (a few MB of memory a passkey-only deployment never needs).
 */
function commonPasswords(): Promise<ReadonlySet<string>> {
  common ??= import('@zxcvbn-ts/language-common').then(({ dictionary }) => new Set(dictionary['passwords-common']));
  return common;
}

/** Whether a password is one of the common or breached passwords (compared in lower case). */
export async function isCommonPassword(password: string): Promise<boolean> {
  return (await commonPasswords()).has(password.normalize('NFKC').toLowerCase());
}

/** The sentence every password form shows for a common password. */
export const commonPasswordMessage = (field: string) =>
  `${field} is one of the most common passwords, which are tried first; choose another.`;

/** 400 invalid_parameter naming `field` when the password is a common one (admin API); null otherwise. */
export async function commonPasswordError(password: string, field = 'password'): Promise<AppError | null> {
  return (await isCommonPassword(password)) ? errors.invalidParameter(field, commonPasswordMessage(field)) : null;
}
