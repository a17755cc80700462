import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AuditActor } from '@attest/common';
import { ReceivingAddressService, signatureVerifier } from '../src/receiving-addresses';
import { newAppId, transactionsHarness, type TransactionsHarness } from './support';

/**
 * Issue 40, item 1: the store and the check the payment paths make. One app per (chain, address); a
 * challenge proves an address once, for its app, before it expires; the signature must be the address's.
 */
describe('receiving addresses: the store, the check, the proof', () => {
  let h: TransactionsHarness;
  let service: ReceivingAddressService;
  const operator: AuditActor = { type: 'operator', id: 'test' };

  beforeAll(async () => {
    h = await transactionsHarness();
    service = new ReceivingAddressService(h.storage.db, signatureVerifier({}), { chains: ['worldchain'] });
  });
  afterAll(() => h.close());

  it('holds one app per (chain, address); the check answers for that app only', async () => {
    const [a, b] = [newAppId(), newAppId()];
    const address = privateKeyToAccount(generatePrivateKey()).address;
    expect(await service.isReceivingAddress(a, 'worldchain', address)).toBe(false);
    const first = await service.addByOperator(a, 'WorldChain', address, operator);
    expect(first).toMatchObject({
      added: true,
      address: { appId: a, chain: 'worldchain', address: address.toLowerCase(), proof: 'operator' },
    });
    expect((await service.addByOperator(a, 'worldchain', address, operator)).added).toBe(false);
    await expect(service.addByOperator(b, 'worldchain', address.toLowerCase(), operator)).rejects.toMatchObject({
      code: 'receiving_address_taken',
      status: 409,
      attribute: 'address',
    });
    expect(await service.isReceivingAddress(a, 'worldchain', address.toLowerCase())).toBe(true);
    expect(await service.isReceivingAddress(b, 'worldchain', address)).toBe(false);
    expect(await service.ownerOf('worldchain', address)).toBe(a);
    // the primary key decides, whatever the service checked before
    await expect(
      h.storage.db.query(
        "INSERT INTO receiving_addresses (chain, address, app_id, proof) VALUES ('worldchain', $1, $2, 'operator')",
        [address.toLowerCase(), b],
      ),
    ).rejects.toThrow();
    await expect(service.addByOperator(a, 'base', address, operator)).rejects.toMatchObject({
      code: 'invalid_parameter',
      attribute: 'chain',
    });
    await service.remove(a, 'worldchain', address, operator);
    expect(await service.ownerOf('worldchain', address)).toBeNull();
    await expect(service.remove(a, 'worldchain', address, operator)).rejects.toMatchObject({ status: 404 });
  });

  it('adds an address proven by its EIP-191 signature of a challenge, once', async () => {
    const app = newAppId();
    const account = privateKeyToAccount(generatePrivateKey());
    const challenge = await service.challenge(app, 'worldchain', account.address);
    expect(challenge.message).toContain(app);
    expect(challenge.message).toContain(account.address.toLowerCase());
    const signature = await account.signMessage({ message: challenge.message });
    const proven = await service.prove(app, challenge.id, signature, operator);
    expect(proven.address).toMatchObject({ appId: app, address: account.address.toLowerCase(), proof: 'eip191' });
    // used once
    await expect(service.prove(app, challenge.id, signature, operator)).rejects.toMatchObject({
      code: 'invalid_challenge',
      status: 400,
      attribute: 'challenge_id',
    });
  });

  it('refuses a signature by another key, another app’s challenge and an expired challenge', async () => {
    const [app, other] = [newAppId(), newAppId()];
    const account = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey());
    const c1 = await service.challenge(app, 'worldchain', account.address);
    await expect(
      service.prove(app, c1.id, await stranger.signMessage({ message: c1.message }), operator),
    ).rejects.toMatchObject({ code: 'invalid_signature', status: 400, attribute: 'signature' });
    expect(await service.ownerOf('worldchain', account.address)).toBeNull();
    const c2 = await service.challenge(app, 'worldchain', account.address);
    await expect(
      service.prove(other, c2.id, await account.signMessage({ message: c2.message }), operator),
    ).rejects.toMatchObject({ code: 'invalid_challenge' });
    const c3 = await service.challenge(app, 'worldchain', account.address);
    await h.storage.db.query(
      "UPDATE receiving_address_challenges SET expires_at = now() - interval '1 second' WHERE id = $1",
      [c3.id],
    );
    await expect(
      service.prove(app, c3.id, await account.signMessage({ message: c3.message }), operator),
    ).rejects.toMatchObject({ code: 'challenge_expired', attribute: 'challenge_id' });
    expect(await service.ownerOf('worldchain', account.address)).toBeNull();
  });
});
