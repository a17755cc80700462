import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { claimedAuthorizationMismatch, claimRefusal, purposeOf, referenceFor } from '../src/x402/payment-purpose';
import type { SettlementRow } from '../src/x402/settlement-store';

const payTo = '0x00000000000000000000000000000000000000aB';
const asks: PaymentRequirements = {
  scheme: 'exact',
  network: 'eip155:1337',
  asset: '0x000000000000000000000000000000000000000C',
  amount: '1000000',
  payTo,
  maxTimeoutSeconds: 300,
  extra: { name: 'Test USD', version: '2', payment_request_id: 'pr_1' },
};
const payload = (url?: string): PaymentPayload => ({
  x402Version: 2,
  ...(url ? { resource: { url } } : {}),
  accepted: asks,
  payload: {},
});
const now = Math.floor(Date.now() / 1000);
const rowFor = (purpose: { resource: string | null; requirementsHash: string | null }): SettlementRow => ({
  network: 'eip155:1337',
  token: asks.asset.toLowerCase(),
  payer: '0x00000000000000000000000000000000000000d0',
  nonce: `0x${'1'.repeat(64)}`,
  appId: 'app_1',
  payTo: payTo.toLowerCase(),
  value: '1000000',
  transactionHash: null,
  outcome: null,
  leaseUntil: new Date(),
  fence: 1,
  human: null,
  paymentId: null,
  validAfter: String(now - 600),
  validBefore: String(now + 60),
  ...purpose,
});

/** Issue 43: what a claim pays for (payment-purpose.ts), and when a settle of its authorization is a retry. */
describe('x402 payment purpose', () => {
  it('hashes the seller requirements canonically: key order, address case and maxTimeoutSeconds do not count', () => {
    const { requirementsHash } = purposeOf(payload('http://seller.test/a'), asks);
    expect(requirementsHash).toMatch(/^[0-9a-f]{64}$/);
    const same = {
      extra: { version: '2', payment_request_id: 'pr_1', name: 'Test USD' },
      maxTimeoutSeconds: 60,
      payTo: payTo.toLowerCase(),
      amount: '1000000',
      asset: asks.asset.toLowerCase(),
      network: 'eip155:1337',
      scheme: 'exact',
    } as PaymentRequirements;
    expect(purposeOf(payload('http://seller.test/a'), same).requirementsHash).toBe(requirementsHash);
    for (const other of [
      { ...asks, amount: '999999' },
      { ...asks, extra: { ...asks.extra, payment_request_id: 'pr_2' } },
      { ...asks, extra: { ...asks.extra, route: '/b' } },
    ])
      expect(purposeOf(payload('http://seller.test/a'), other).requirementsHash).not.toBe(requirementsHash);
  });

  it('answers a retry; refuses another resource or other requirements as a used nonce, naming the cause', () => {
    const mine = purposeOf(payload('http://seller.test/a'), asks);
    const row = rowFor(mine);
    expect(claimRefusal('app_1', row, mine, asks)).toBeNull();
    expect(claimRefusal('app_1', row, purposeOf(payload('http://seller.test/b'), asks), asks)).toEqual({
      reason: 'invalid_exact_evm_nonce_already_used',
      message: expect.stringContaining('another resource (http://seller.test/a), not http://seller.test/b'),
    });
    expect(claimRefusal('app_1', row, purposeOf(payload(), asks), asks)).toMatchObject({
      reason: 'invalid_exact_evm_nonce_already_used',
    });
    const cheaper = { ...asks, amount: '1' };
    expect(claimRefusal('app_1', row, purposeOf(payload('http://seller.test/a'), cheaper), cheaper)).toEqual({
      reason: 'invalid_exact_evm_nonce_already_used',
      message: expect.stringContaining('other payment requirements'),
    });
    expect(claimRefusal('app_2', row, mine, asks)).toMatchObject({
      reason: 'settled_by_another_app',
    });
  });

  it('a row claimed before 024 (no purpose) answers retries while the authorization is valid; expired, its success no longer', () => {
    const success = { success: true, transaction: `0x${'2'.repeat(64)}`, network: 'eip155:1337' as const };
    const legacy = { ...rowFor({ resource: null, requirementsHash: null }), outcome: success };
    const elsewhere = purposeOf(payload('http://seller.test/b'), asks);
    expect(claimRefusal('app_1', legacy, elsewhere, asks)).toBeNull();
    const expired = { ...legacy, validBefore: String(now - 1) };
    expect(claimRefusal('app_1', expired, elsewhere, asks)).toEqual({
      reason: 'invalid_exact_evm_nonce_already_used',
      message: expect.stringContaining('expired'),
    });
    // expired: a failure (it bought nothing) is still answered, one in flight is still finished as before
    const failed = { ...success, success: false, errorReason: 'invalid_exact_evm_transaction_failed' };
    expect(claimRefusal('app_1', { ...expired, outcome: failed }, elsewhere, asks)).toBeNull();
    expect(claimRefusal('app_1', { ...expired, outcome: null }, elsewhere, asks)).toBeNull();
    // its payTo and amount still decide first, as before
    expect(claimRefusal('app_1', legacy, elsewhere, { ...asks, amount: '1000001' })).toMatchObject({
      reason: 'invalid_exact_evm_authorization_value',
    });
  });

  it('a row from before 024 that stored no validBefore (before 025) is taken as expired: its success answers no new settle', () => {
    const success = { success: true, transaction: `0x${'2'.repeat(64)}`, network: 'eip155:1337' as const };
    const unknown = {
      ...rowFor({ resource: null, requirementsHash: null }),
      validAfter: null,
      validBefore: null,
      outcome: success,
    };
    const elsewhere = purposeOf(payload('http://seller.test/b'), asks);
    expect(claimRefusal('app_1', unknown, elsewhere, asks)).toEqual({
      reason: 'invalid_exact_evm_nonce_already_used',
      message: expect.stringContaining('expired'),
    });
    const failed = { ...success, success: false, errorReason: 'invalid_exact_evm_transaction_failed' };
    expect(claimRefusal('app_1', { ...unknown, outcome: failed }, elsewhere, asks)).toBeNull();
    expect(claimRefusal('app_1', { ...unknown, outcome: null }, elsewhere, asks)).toBeNull();
  });

  it('an authorization presented for a claim is the claim’s only with its to, value and (when stored) validity', () => {
    const row = rowFor(purposeOf(payload('http://seller.test/a'), asks));
    const a = {
      from: row.payer,
      to: payTo,
      value: '1000000',
      validAfter: String(now - 600),
      validBefore: String(now + 60),
      nonce: row.nonce,
    } as Parameters<typeof claimedAuthorizationMismatch>[1];
    expect(claimedAuthorizationMismatch(row, a)).toBeNull();
    for (const other of [
      { to: '0x00000000000000000000000000000000000000ac' as const },
      { value: '1000001' },
      { validAfter: String(now - 599) },
      { validBefore: String(now + 61) },
    ])
      expect(claimedAuthorizationMismatch(row, { ...a, ...other })).toEqual(expect.stringContaining('sign a new one'));
    // a row from before 025 kept no validity: only to and value are compared
    const older = { ...row, validAfter: null, validBefore: null };
    expect(claimedAuthorizationMismatch(older, { ...a, validBefore: String(now + 3600) })).toBeNull();
    expect(claimedAuthorizationMismatch(older, { ...a, value: '2000000' })).not.toBeNull();
  });

  it('the reference a claim makes is the one its payload made', () => {
    expect(referenceFor('pay_1', 'http://seller.test/a', '0xab')).toBe('x402:id:pay_1');
    expect(referenceFor(null, 'http://seller.test/a', '0xab')).toBe('x402:0xab http://seller.test/a');
    expect(referenceFor(null, null, '0xab')).toBe('x402:0xab');
  });
});
