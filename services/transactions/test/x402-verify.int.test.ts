import request from 'supertest';
import { encodeFunctionData, hashTypedData, recoverAddress, type Hex } from 'viem';
import { eip3009ABI } from '@x402/evm';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { ReceivingAddressService } from '../src/receiving-addresses';
import { newAppId, type TransactionsHarness } from './support';
import type { Address, LocalChain } from './support/local-chain';
import { x402Facilitator } from './support/x402-facilitator';
import { authorizationTypedData, type Authorization } from '../src/x402/x402-chain';
import { newAccount, requirementsFor, signedPayment, TOKEN_NAME, TOKEN_VERSION, type X402Chain } from './support/x402';

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * Issue 43: POST /x402/verify checks an EIP-3009 authorization without moving funds, each refusal with the
 * standard reason: a wrong payTo, an address the app did not register, a short amount, an expired window,
 * a bad signature, an empty balance. On ganache, with a token the tests compile (fixtures/Eip3009Token.sol).
 */
describe('x402 verify (ganache)', () => {
  let chain: LocalChain;
  let x402: X402Chain;
  let h: TransactionsHarness;
  let receiving: ReceivingAddressService;
  const appId = newAppId();
  let apiKey: string;
  const seller = newAccount().address;
  const payer = newAccount();

  beforeAll(async () => {
    ({ chain, x402, h, apiKey, receiving } = await x402Facilitator(appId, [seller]));
    await x402.mint(payer.address, 5_000_000n);
  }, 120000);
  afterAll(async () => {
    await h?.close();
    await chain?.close();
  });

  const verify = (payload: PaymentPayload, requirements: PaymentRequirements, key = apiKey) =>
    request(h.publicApp)
      .post('/x402/verify')
      .set('Authorization', `Bearer ${key}`)
      .send({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });

  const asks = () => requirementsFor(x402.token, seller, 1_000_000n);
  const typedDataOf = (a: Authorization) =>
    authorizationTypedData({ name: TOKEN_NAME, version: TOKEN_VERSION, chainId: 1337, token: x402.token }, a);
  const transferCall = (a: Authorization, signature: Hex) =>
    encodeFunctionData({
      abi: eip3009ABI,
      functionName: 'transferWithAuthorization',
      args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, signature],
    });

  it('GET /x402/supported: the exact scheme on eip155:1337 and the relayer, with the API key only', async () => {
    const res = await request(h.publicApp).get('/x402/supported').set('Authorization', `Bearer ${apiKey}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:1337' }],
      extensions: ['payment-identifier'],
      signers: { 'eip155:*': [expect.stringMatching(/^0x[0-9a-fA-F]{40}$/)] },
    });
    expect((await request(h.publicApp).get('/x402/supported')).status).toBe(401);
    const payment = await signedPayment(payer, asks());
    expect((await verify(payment, asks(), 'api_wrong')).status).toBe(401);
  });

  it('refuses requirements asking for the human behind the agent when no identity service is configured (X402_IDENTITY_ISSUER)', async () => {
    const base = asks();
    const human = { ...base, extra: { ...base.extra, 'attest-human': { audience: 'https://shop.example.com/api' } } };
    const res = await verify(await signedPayment(payer, human), human);
    expect(res.body).toEqual({
      isValid: false,
      invalidReason: 'human_proof_not_configured',
      invalidMessage: expect.stringContaining('X402_IDENTITY_ISSUER is not set'),
      payer: payer.address,
    });
  });

  it('accepts a valid authorization and moves nothing', async () => {
    const before = await x402.balanceOf(payer.address);
    const res = await verify(await signedPayment(payer, asks()), asks());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ isValid: true, payer: payer.address });
    expect(res.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'content-length': String(Buffer.byteLength(res.text)),
    });
    expect(await x402.balanceOf(payer.address)).toBe(before);
    expect(await x402.balanceOf(seller)).toBe(0n);
  });

  it('accepts more than the amount asked', async () => {
    const res = await verify(await signedPayment(payer, asks(), { value: 1_500_000n }), asks());
    expect(res.body).toEqual({ isValid: true, payer: payer.address });
  });

  const refused = async (payload: PaymentPayload, requirements: PaymentRequirements, reason: string) => {
    const res = await verify(payload, requirements);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      isValid: false,
      invalidReason: reason,
      invalidMessage: expect.any(String),
      payer: (payload.payload as { authorization: { from: string } }).authorization.from,
    });
    return res.body as { invalidMessage: string };
  };

  it('refuses an authorization to another address than payTo', async () => {
    const elsewhere = newAccount().address;
    await refused(
      await signedPayment(payer, asks(), { to: elsewhere }),
      asks(),
      'invalid_exact_evm_recipient_mismatch',
    );
  });

  it('refuses a payTo the app did not register (even one another app did)', async () => {
    const unregistered = newAccount().address;
    const theirs = requirementsFor(x402.token, unregistered, 1_000_000n);
    const body = await refused(await signedPayment(payer, theirs), theirs, 'recipient_not_registered');
    expect(body.invalidMessage).toContain(unregistered);
    const otherApp = newAppId();
    const otherSeller = newAccount().address;
    await receiving.addByOperator(otherApp, 'worldchain', otherSeller, { type: 'operator', id: 'test' });
    const another = requirementsFor(x402.token, otherSeller, 1_000_000n);
    await refused(await signedPayment(payer, another), another, 'recipient_not_registered');
  });

  it('refuses an amount short of the requirement', async () => {
    await refused(
      await signedPayment(payer, asks(), { value: 999_999n }),
      asks(),
      'invalid_exact_evm_authorization_value',
    );
  });

  it('refuses an expired window and one not yet open', async () => {
    const now = BigInt(Math.floor(Date.now() / 1000));
    await refused(
      await signedPayment(payer, asks(), { validBefore: now - 1n }),
      asks(),
      'invalid_exact_evm_payload_authorization_valid_before',
    );
    await refused(
      await signedPayment(payer, asks(), { validAfter: now + 3600n }),
      asks(),
      'invalid_exact_evm_payload_authorization_valid_after',
    );
  });

  it('refuses a signature that is not the payer’s, and one over other values', async () => {
    await refused(await signedPayment(payer, asks(), { signer: newAccount() }), asks(), 'invalid_exact_evm_signature');
    const signed = await signedPayment(payer, asks());
    const auth = (signed.payload as { authorization: { value: string } }).authorization;
    auth.value = '2000000';
    await refused(signed, asks(), 'invalid_exact_evm_signature');
  });

  it('refuses the payer’s own signature malleated to a high s, as the token refuses it at settle', async () => {
    const signed = await signedPayment(payer, asks());
    const payload = signed.payload as { authorization: Authorization; signature: Hex };
    const { signature } = payload;
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    const v = Number.parseInt(signature.slice(130), 16);
    // the same key signs (N - s, the other parity): ecrecover's malleability; EIP-2 and the token allow only low s
    const high =
      `0x${signature.slice(2, 66)}${(SECP256K1_N - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
    expect(
      (
        await recoverAddress({ hash: hashTypedData(typedDataOf(payload.authorization)), signature: high })
      ).toLowerCase(),
    ).toBe(payer.address.toLowerCase());
    const simulate = (sig: Hex) =>
      chain.rpc('eth_call', [{ to: x402.token, data: transferCall(payload.authorization, sig) }, 'latest']).then(
        () => 'carried',
        () => 'reverted',
      );
    expect(await simulate(signature)).toBe('carried');
    expect(await simulate(high)).toBe('reverted');

    await refused({ ...signed, payload: { ...payload, signature: high } }, asks(), 'invalid_exact_evm_signature');
    expect((await verify(signed, asks())).body).toEqual({ isValid: true, payer: payer.address });
  });

  it('refuses a payer whose balance is short (empty)', async () => {
    const empty = newAccount();
    await refused(await signedPayment(empty, asks()), asks(), 'invalid_exact_evm_insufficient_balance');
  });

  it('verifies a contract wallet’s authorization by ERC-1271', async () => {
    const owner = newAccount();
    const wallet = await x402.deployWallet(owner.address);
    await x402.mint(wallet, 2_000_000n);
    const res = await verify(await signedPayment(owner, asks(), { from: wallet }), asks());
    expect(res.body).toEqual({ isValid: true, payer: wallet });
    await refused(
      await signedPayment(owner, asks(), { from: wallet, signer: newAccount() }),
      asks(),
      'invalid_exact_evm_signature',
    );
  });

  it('refuses another network, another token, a wrong EIP-712 domain', async () => {
    const base = requirementsFor(x402.token, seller, 1_000_000n, 'eip155:8453');
    await refused(await signedPayment(payer, base), base, 'invalid_network');
    const other = requirementsFor(newAccount().address as Address, seller, 1_000_000n);
    await refused(await signedPayment(payer, other), other, 'invalid_payment_requirements');
    const renamed = { ...asks(), extra: { name: 'USD Coin', version: '2' } };
    await refused(await signedPayment(payer, renamed), renamed, 'invalid_exact_evm_token_name_mismatch');
  });

  it('answers 400 naming the field for a body that is not a verify request', async () => {
    const res = await request(h.publicApp)
      .post('/x402/verify')
      .set('Authorization', `Bearer ${apiKey}`)
      .send({ x402Version: 2, paymentPayload: await signedPayment(payer, asks()) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'required', attribute: 'paymentRequirements' });
  });
});
