import request from 'supertest';
import { hashMessage } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AuditActor } from '@attest/common';
import {
  CHALLENGE_TTL_MS,
  MAX_OPEN_CHALLENGES,
  ReceivingAddressService,
  signatureVerifier,
} from '../src/receiving-addresses';
import { apiKeyFor, newAppId, transactionsHarness, type TransactionsHarness } from './support';
import { localChain, type Address, type LocalChain } from './support/local-chain';

/**
 * A smart-contract wallet in 58 bytes of EVM code, for EIP-1271: a call with 32 bytes of calldata approves that
 * hash (as a Safe approves a message); isValidSignature(hash, signature) answers 0x1626ba7e for the approved hash
 * and 0xffffffff for any other. Hand-assembled: the init code copies the runtime code and returns it.
 */
const EIP1271_WALLET =
  '0x603a80600b6000396000f3' +
  '3660201460325760043560005414602157' +
  '63ffffffff60e01b60005260206000f3' +
  '5b631626ba7e60e01b60005260206000f3' +
  '5b600035600055' +
  '00';

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

  it('keeps owners in memory, and each replica answers a change at once (the bus drops what it held)', async () => {
    // two replicas on one bus, each with its cache (the check outside a transaction is served from memory)
    const options = { chains: ['worldchain'], bus: h.storage.bus };
    const [one, two] = [0, 1].map(() => new ReceivingAddressService(h.storage.db, signatureVerifier({}), options));
    const [a, b] = [newAppId(), newAppId()];
    const address = privateKeyToAccount(generatePrivateKey()).address;
    // nobody's, and remembered as nobody's by both
    expect(await one.isReceivingAddress(a, 'worldchain', address)).toBe(false);
    expect(await two.ownerOf('worldchain', address)).toBeNull();
    await one.addByOperator(a, 'worldchain', address, operator);
    expect(await two.isReceivingAddress(a, 'worldchain', address)).toBe(true);
    expect(await one.isReceivingAddress(a, 'worldchain', address.toLowerCase())).toBe(true);
    // the row changed behind the caches' back (no service did it): they still answer what they read...
    await h.storage.db.query('UPDATE receiving_addresses SET app_id = $1 WHERE chain = $2 AND address = $3', [
      b,
      'worldchain',
      address.toLowerCase(),
    ]);
    expect(await two.ownerOf('worldchain', address)).toBe(a);
    // ...while a check in a transaction reads the table
    expect(await h.storage.db.transaction((tx) => two.ownerOf('worldchain', address, tx))).toBe(b);
    await h.storage.db.query('UPDATE receiving_addresses SET app_id = $1 WHERE chain = $2 AND address = $3', [
      a,
      'worldchain',
      address.toLowerCase(),
    ]);
    // a removal on one replica: the other no longer takes the address as the app's
    await two.remove(a, 'worldchain', address, operator);
    expect(await one.isReceivingAddress(a, 'worldchain', address)).toBe(false);
    expect(await two.isReceivingAddress(a, 'worldchain', address)).toBe(false);
    // and an addition by another app is seen by both
    await one.addByOperator(b, 'worldchain', address, operator);
    expect(await two.ownerOf('worldchain', address)).toBe(b);
    expect(await one.isReceivingAddress(a, 'worldchain', address)).toBe(false);
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

describe('receiving addresses: a contract proves with EIP-1271 (ganache)', () => {
  let h: TransactionsHarness;
  let chain: LocalChain;
  let service: ReceivingAddressService;
  const operator: AuditActor = { type: 'operator', id: 'test' };

  beforeAll(async () => {
    chain = await localChain();
    h = await transactionsHarness();
    service = new ReceivingAddressService(h.storage.db, signatureVerifier({ worldchain: chain.url }), {
      chains: ['worldchain'],
    });
  }, 60000);
  afterAll(async () => {
    await h.close();
    await chain.close();
  });

  async function deployWallet(): Promise<Address> {
    const hash = (await chain.rpc('eth_sendTransaction', [
      { from: chain.accounts[0], data: EIP1271_WALLET, gas: '0x30000' },
    ])) as string;
    const receipt = (await chain.rpc('eth_getTransactionReceipt', [hash])) as { contractAddress: Address };
    return receipt.contractAddress;
  }
  const approve = (wallet: Address, message: string) =>
    chain.rpc('eth_sendTransaction', [
      { from: chain.accounts[0], to: wallet, data: hashMessage(message), gas: '0x10000' },
    ]);

  it('adds a contract whose isValidSignature accepts the challenge; refuses one that does not', async () => {
    const app = newAppId();
    const wallet = await deployWallet();
    const challenge = await service.challenge(app, 'worldchain', wallet);
    // not approved yet: the contract answers 0xffffffff
    const refused = await service.challenge(app, 'worldchain', wallet);
    await expect(service.prove(app, refused.id, '0x00', operator)).rejects.toMatchObject({
      code: 'invalid_signature',
      attribute: 'signature',
    });
    await approve(wallet, challenge.message);
    const proven = await service.prove(app, challenge.id, '0x00', operator);
    expect(proven.address).toMatchObject({ appId: app, address: wallet.toLowerCase(), proof: 'eip1271' });
    expect(await service.ownerOf('worldchain', wallet)).toBe(app);
  });

  it('an account (no code) proves only with its own EIP-191 signature, even with an RPC', async () => {
    const app = newAppId();
    const account = privateKeyToAccount(generatePrivateKey());
    const challenge = await service.challenge(app, 'worldchain', account.address);
    await expect(service.prove(app, challenge.id, '0x00', operator)).rejects.toMatchObject({
      code: 'invalid_signature',
    });
    const again = await service.challenge(app, 'worldchain', account.address);
    const proven = await service.prove(app, again.id, await account.signMessage({ message: again.message }), operator);
    expect(proven.address.proof).toBe('eip191');
  });
});

describe('receiving addresses: the app API and the admin API', () => {
  let h: TransactionsHarness;

  beforeAll(async () => {
    h = await transactionsHarness();
  });
  afterAll(() => h.close());

  it('an app proves an address with its API key, lists and removes it; audited with its key', async () => {
    const app = newAppId();
    const { api_key: key, key_id: keyId } = await apiKeyFor(h, app);
    const api = (method: 'get' | 'post' | 'delete', path: string) =>
      request(h.publicApp)[method](`/api/v2/client/receiving-addresses${path}`).set('Authorization', `Bearer ${key}`);
    const account = privateKeyToAccount(generatePrivateKey());
    const address = account.address.toLowerCase();
    const asked = await api('post', '/challenges').send({ chain: 'worldchain', address: account.address });
    expect(asked.status).toBe(201);
    expect(asked.headers['cache-control']).toBe('no-store');
    expect(asked.body).toEqual({
      challenge_id: expect.stringMatching(/^rac_[0-9a-f]{32}$/),
      app_id: app,
      chain: 'worldchain',
      address,
      message: expect.stringContaining(`for app ${app} on worldchain`),
      expires_at: expect.any(String),
    });
    const signature = await account.signMessage({ message: asked.body.message });
    const added = await api('post', '').send({ challenge_id: asked.body.challenge_id, signature });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      app_id: app,
      chain: 'worldchain',
      address,
      proof: 'eip191',
      created_at: expect.any(String),
    });
    const reused = await api('post', '').send({ challenge_id: asked.body.challenge_id, signature });
    expect(reused.status).toBe(400);
    expect(reused.body).toMatchObject({ code: 'invalid_challenge', attribute: 'challenge_id' });
    expect((await api('get', '')).body).toEqual([added.body]);
    expect((await api('get', '?chain=base')).body).toEqual([]);
    const [audit] = await h.storage.db.query<{ actor_type: string; actor: string; detail: unknown }>(
      "SELECT actor_type, actor, detail FROM audit_events WHERE type = 'receiving_address.added' AND subject = $1",
      [app],
    );
    expect(audit).toMatchObject({ actor_type: 'app', actor: keyId });
    // another app cannot take it, nor ask for a challenge for it
    const { api_key: otherKey } = await apiKeyFor(h, newAppId());
    const taken = await request(h.publicApp)
      .post('/api/v2/client/receiving-addresses/challenges')
      .set('Authorization', `Bearer ${otherKey}`)
      .send({ chain: 'worldchain', address });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({
      code: 'receiving_address_taken',
      detail: `address ${address} on worldchain is another app's receiving address; one app receives at an address.`,
      attribute: 'address',
    });
    // bad input names the field
    const bad = await api('post', '/challenges').send({ chain: 'worldchain', address: '0x12' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_parameter', attribute: 'address' });
    const unknownChain = await api('post', '/challenges').send({ chain: 'solana', address });
    expect(unknownChain.body).toMatchObject({ code: 'invalid_parameter', attribute: 'chain' });
    const removed = await api('delete', `/worldchain/${account.address}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual(added.body);
    expect((await api('delete', `/worldchain/${address}`)).status).toBe(404);
    expect((await api('get', '')).body).toEqual([]);
  });

  it('an operator adds, lists and removes through the admin API, audited under the operator; one app per address', async () => {
    const [app, other] = [newAppId(), newAppId()];
    const address = `0x${'4d'.repeat(20)}`;
    const added = await h.admin('post', `/apps/${app}/receiving-addresses`).send({ chain: 'worldchain', address });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      app_id: app,
      chain: 'worldchain',
      address,
      proof: 'operator',
      created_at: expect.any(String),
    });
    expect(
      (await h.admin('post', `/apps/${app}/receiving-addresses`).send({ chain: 'worldchain', address })).status,
    ).toBe(200);
    const taken = await h.admin('post', `/apps/${other}/receiving-addresses`).send({ chain: 'worldchain', address });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('receiving_address_taken');
    const audit = await h.admin('get', '/audit').query({ type: 'receiving_address.added' });
    expect(audit.body.events.filter((e: { subject: string }) => e.subject === app)).toEqual([
      expect.objectContaining({
        actor: expect.objectContaining({ type: 'operator', id: 'admin' }),
        subject: app,
        detail: { app_id: app, chain: 'worldchain', address, proof: 'operator' },
      }),
    ]);
    expect((await h.admin('get', `/apps/${app}/receiving-addresses`)).body).toEqual([added.body]);
    expect((await h.admin('delete', `/apps/${app}/receiving-addresses/worldchain/${address}`)).status).toBe(200);
    expect((await h.admin('get', `/apps/${app}/receiving-addresses`)).body).toEqual([]);
    const removedAudit = await h.admin('get', '/audit').query({ type: 'receiving_address.removed' });
    expect(removedAudit.body.events.filter((e: { subject: string }) => e.subject === app)).toEqual([
      expect.objectContaining({ subject: app }),
    ]);
    // now the other app may have it
    expect(
      (await h.admin('post', `/apps/${other}/receiving-addresses`).send({ chain: 'worldchain', address })).status,
    ).toBe(201);
  });

  it(`an app has at most ${MAX_OPEN_CHALLENGES} open challenges: 429 too_many_challenges with Retry-After, across concurrent asks; a used or expired one frees its place`, async () => {
    const app = newAppId();
    const { api_key: key } = await apiKeyFor(h, app);
    const ask = (address: string, apiKey = key) =>
      request(h.publicApp)
        .post('/api/v2/client/receiving-addresses/challenges')
        .set('Authorization', `Bearer ${apiKey}`)
        .send({ chain: 'worldchain', address });
    const accounts = Array.from({ length: MAX_OPEN_CHALLENGES + 5 }, () => privateKeyToAccount(generatePrivateKey()));
    // asked all at once: exactly the bound is made
    const answers = await Promise.all(accounts.map((a) => ask(a.address)));
    const made = answers.filter((r) => r.status === 201);
    const refused = answers.filter((r) => r.status !== 201);
    expect(made).toHaveLength(MAX_OPEN_CHALLENGES);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.body).toEqual({
        code: 'too_many_challenges',
        attribute: null,
        detail: expect.stringMatching(
          new RegExp(
            `^This app has ${MAX_OPEN_CHALLENGES} open receiving-address challenges .* ask again in \\d+ seconds, when the first expires\\.$`,
          ),
        ),
      });
      const retryAfter = Number(r.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(CHALLENGE_TTL_MS / 1000);
    }
    const open = await h.storage.db.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM receiving_address_challenges WHERE app_id = $1',
      [app],
    );
    expect(open[0].n).toBe(String(MAX_OPEN_CHALLENGES));
    // the operator's admin API answers the same for this app; another app is not limited by it
    const viaAdmin = await h
      .admin('post', `/apps/${app}/receiving-addresses/challenges`)
      .send({ chain: 'worldchain', address: accounts[0].address });
    expect(viaAdmin.status).toBe(429);
    expect(viaAdmin.body.code).toBe('too_many_challenges');
    const { api_key: otherKey } = await apiKeyFor(h, newAppId());
    expect((await ask(accounts[0].address, otherKey)).status).toBe(201);

    // a challenge used by a proof frees its place
    const first = made[0].body as { challenge_id: string; message: string; address: string };
    const signer = accounts.find((a) => a.address.toLowerCase() === first.address)!;
    const proven = await request(h.publicApp)
      .post('/api/v2/client/receiving-addresses')
      .set('Authorization', `Bearer ${key}`)
      .send({ challenge_id: first.challenge_id, signature: await signer.signMessage({ message: first.message }) });
    expect(proven.status).toBe(201);
    const unused = accounts.filter((a) => !made.some((m) => m.body.address === a.address.toLowerCase()));
    expect((await ask(unused[0].address)).status).toBe(201);
    expect((await ask(unused[1].address)).status).toBe(429);
    // so does one that expired
    await h.storage.db.query(
      `UPDATE receiving_address_challenges SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [(made[1].body as { challenge_id: string }).challenge_id],
    );
    expect((await ask(unused[1].address)).status).toBe(201);
    expect((await ask(unused[2].address)).status).toBe(429);
  });
});
