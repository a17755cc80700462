import { randomBytes } from 'node:crypto';
import { settlementStore, type AuthorizationKey } from '../src/x402/settlement-store';
import { newAppId, transactionsHarness, type TransactionsHarness } from './support';

/**
 * Issue 43: verify asks the settlements table, for each authorization, whether it is being settled; the finds
 * asked together are one statement. Each still answers its own key, read after it was asked.
 */
describe('x402 settlement lookups made together', () => {
  let h: TransactionsHarness;
  beforeAll(async () => {
    h = await transactionsHarness();
  });
  afterAll(() => h.close());

  const key = (): AuthorizationKey => ({
    network: 'eip155:480',
    token: `0x${randomBytes(20).toString('hex')}`,
    payer: `0x${randomBytes(20).toString('hex')}`,
    nonce: `0x${randomBytes(32).toString('hex')}`,
  });
  // claim answers its fencing token: 1 for an authorization claimed the first time
  const claim = (store: ReturnType<typeof settlementStore>, k: AuthorizationKey, appId: string, value: string) =>
    store.claim(k, { appId, payTo: `0x${'2'.repeat(40)}`, value, leaseMs: 60000 });

  it('answers each find with its own row, or null, whether asked alone or with others', async () => {
    const store = settlementStore(h.storage.db);
    const [a, b, absent] = [key(), key(), key()];
    // the same payer and token, another nonce: another authorization
    const sibling = { ...a, nonce: `0x${randomBytes(32).toString('hex')}` };
    const [appA, appB] = [newAppId(), newAppId()];
    expect(await claim(store, a, appA, '1000000')).toBe(1);
    expect(await claim(store, b, appB, '2500000')).toBe(1);

    const together = await Promise.all([
      store.find(a),
      store.find(absent),
      store.find(b),
      store.find(sibling),
      store.find(a),
    ]);
    expect(together.map((row) => row && { appId: row.appId, value: row.value, nonce: row.nonce })).toEqual([
      { appId: appA, value: '1000000', nonce: a.nonce },
      null,
      { appId: appB, value: '2500000', nonce: b.nonce },
      null,
      { appId: appA, value: '1000000', nonce: a.nonce },
    ]);
    expect(together[0]).toMatchObject({ ...a, outcome: null, transactionHash: null });
    expect(together[0]!.leaseUntil.getTime()).toBeGreaterThan(Date.now());
    // alone
    expect(await store.find(absent)).toBeNull();
    expect(await store.find(b)).toMatchObject({ ...b, appId: appB });
  });

  it('reads each find after it was asked: a claim committed before a find is seen by it', async () => {
    const store = settlementStore(h.storage.db);
    const other = settlementStore(h.storage.db); // another replica's
    const keys = Array.from({ length: 5 }, key);
    const before = await Promise.all(keys.map((k) => store.find(k)));
    expect(before).toEqual([null, null, null, null, null]);
    const app = newAppId();
    expect(await claim(other, keys[2], app, '7')).toBe(1);
    const after = await Promise.all(keys.map((k) => store.find(k)));
    expect(after.map((row) => row?.appId ?? null)).toEqual([null, null, app, null, null]);
  });

  it('answers more finds than one statement carries', async () => {
    const store = settlementStore(h.storage.db);
    const keys = Array.from({ length: 450 }, key);
    const app = newAppId();
    for (const i of [0, 199, 200, 449]) expect(await claim(store, keys[i], app, `${i + 1}`)).toBe(1);
    const rows = await Promise.all(keys.map((k) => store.find(k)));
    const found = rows.flatMap((row, i) => (row ? [[i, row.value]] : []));
    expect(found).toEqual([
      [0, '1'],
      [199, '200'],
      [200, '201'],
      [449, '450'],
    ]);
  });
});
