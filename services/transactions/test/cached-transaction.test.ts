import { compactTransaction, expandTransaction, StringPool } from '../src/transactions/cached-transaction';
import type { Transaction } from '../src/kernel/transaction';

const row = (i: number, overrides: Partial<Transaction> = {}): Transaction => ({
  id: `0x${i.toString(16).padStart(64, '0')}`,
  appId: '5b0c7f7e-6a0e-4b8e-9a51-1f0c8f1e2d3c',
  type: 'pay',
  reference: `order-${i}`,
  transactionHash: null,
  status: 'pending',
  from: `0x${'1'.repeat(40)}`,
  to: `0x${'2'.repeat(40)}`,
  chain: 'worldchain',
  token: 'USDCE',
  tokenAmount: String(1_000_000 + i),
  statusReason: null,
  createdAt: new Date('2026-11-26T10:00:00.123Z'),
  updatedAt: new Date('2026-11-26T10:05:00.456Z'),
  ...overrides,
});

describe('the compact form of a cached transaction', () => {
  it('gives back every field, the timestamps as Dates to the millisecond', () => {
    const pool = new StringPool();
    for (const t of [
      row(1),
      row(2, {
        type: 'sendTransaction',
        status: 'failed',
        statusReason: 'wrong_amount',
        transactionHash: `0x${'ab'.repeat(32)}`,
      }),
    ]) {
      const cached = compactTransaction(t.id, t, pool);
      expect(cached).not.toHaveProperty('createdAt');
      expect(cached.createdAtMs).toBe(t.createdAt.getTime());
      const back = expandTransaction(cached);
      expect(back).toEqual(t);
      expect(back.createdAt).toBeInstanceOf(Date);
      expect(back.updatedAt.toISOString()).toBe(t.updatedAt.toISOString());
    }
  });

  it('answers a fresh object per lookup: a caller changing one does not change the cache', () => {
    const cached = compactTransaction(row(3).id, row(3), new StringPool());
    const first = expandTransaction(cached);
    first.status = 'mined';
    first.createdAt.setTime(0);
    const second = expandTransaction(cached);
    expect(second.status).toBe('pending');
    expect(second.createdAt.toISOString()).toBe('2026-11-26T10:00:00.123Z');
  });

  it('keeps the id of the row when it was looked up under another key', () => {
    const t = row(4);
    expect(compactTransaction(t.id.toUpperCase(), t, new StringPool()).id).toBe(t.id);
  });

  it('shares repeated strings in a bounded pool', () => {
    const pool = new StringPool(3);
    for (let i = 0; i < 100; i++) compactTransaction(row(i).id, row(i), pool);
    // app, type, status, from, to, chain, token: 7 distinct values through a pool of 3 → never above 3
    expect(pool.size).toBeLessThanOrEqual(3);
    const big = new StringPool();
    for (let i = 0; i < 100; i++) compactTransaction(row(i).id, row(i), big);
    // the same 7 values for 100 rows (null reasons are not pooled; references and amounts are not pooled)
    expect(big.size).toBe(7);
    expect(big.share('USDCE')).toBe('USDCE');
    expect(big.share(null)).toBeNull();
    expect(big.size).toBe(7);
  });
});
