import { MemoryCache } from '@attest/common';
import { loadIdentityConfig } from '../src/config';
import { PasskeyCeremonies, Passkeys, type RelyingParty } from '../src/signin/passkeys';
import type { Passkey, PasskeyStore } from '../src/signin/passkey-store';
import { softAuthenticator } from './soft-authenticator';

const RP = { id: 'localhost', name: 'Attest', origin: 'http://localhost:4000', ttlSeconds: 300 };
/** The authenticator's credential as the store holds it. */
function authenticator() {
  const soft = softAuthenticator(RP);
  const passkey: Passkey = {
    id: soft.id,
    userId: 'usr_test',
    publicKey: soft.publicKey as Uint8Array<ArrayBuffer>,
    counter: 0,
    transports: [],
    name: 'test',
    createdAt: new Date(),
    lastUsedAt: null,
  };
  return { passkey, assert: (challenge: string, uv: boolean) => soft.assert(challenge, uv) };
}

function passkeysWith(userVerification: RelyingParty['userVerification'], passkey: Passkey) {
  const store = {
    find: async (id: string) => (id === passkey.id ? passkey : null),
    recordUse: async () => undefined,
  } as unknown as PasskeyStore;
  const cache = new MemoryCache('pk:');
  // removal is not exercised here
  const removeKeepingOne = async () => 'not_found' as const;
  return {
    passkeys: new Passkeys(
      store,
      new PasskeyCeremonies(cache, 300, 's'.repeat(32)),
      { ...RP, userVerification },
      removeKeepingOne,
    ),
    cache,
  };
}

describe('passkey sign-in and user verification (PASSKEY_USER_VERIFICATION)', () => {
  const device = authenticator();

  it('is required by default: the options ask for it', () => {
    const config = loadIdentityConfig({ IDENTITY_SECRET: 'x'.repeat(32), LOG_LEVEL: 'silent' });
    expect(config.PASSKEY_USER_VERIFICATION).toBe('required');
    expect(() => loadIdentityConfig({ PASSKEY_USER_VERIFICATION: 'discouraged' })).toThrow(/PASSKEY_USER_VERIFICATION/);
  });

  it('required: an assertion without the UV flag (a stolen authenticator, no PIN) is refused; with it, accepted', async () => {
    const { passkeys, cache } = passkeysWith('required', device.passkey);
    const first = await passkeys.authenticationOptions('browser-a');
    expect(first.options.userVerification).toBe('required');
    expect(
      await passkeys.authenticate(first.ceremony, 'browser-a', device.assert(first.options.challenge, false)),
    ).toEqual({ ok: false, failure: 'not_verified' });
    const second = await passkeys.authenticationOptions('browser-a');
    expect(
      await passkeys.authenticate(second.ceremony, 'browser-a', device.assert(second.options.challenge, true)),
    ).toEqual({ ok: true, value: { userId: 'usr_test', userVerified: true } });
    await cache.close();
  });

  it('preferred (a documented choice): accepted without UV, and the outcome says so (amr ["hwk"])', async () => {
    const { passkeys, cache } = passkeysWith('preferred', device.passkey);
    const opts = await passkeys.authenticationOptions('browser-b');
    expect(opts.options.userVerification).toBe('preferred');
    expect(
      await passkeys.authenticate(opts.ceremony, 'browser-b', device.assert(opts.options.challenge, false)),
    ).toEqual({
      ok: true,
      value: { userId: 'usr_test', userVerified: false },
    });
    await cache.close();
  });
});
