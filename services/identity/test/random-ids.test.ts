import { randomHex } from '../src/kernel/crypto';
import { newAuthorizationCode, newOpaqueId } from '../src/kernel/ids';

describe('randomHex: ids drawn from a pool of random bytes', () => {
  it('gives the asked number of bytes as hex, never the same id twice, across many refills of the pool', () => {
    const seen = new Set<string>();
    // 4096-byte pool, 32 bytes each: 5,000 ids refill it about 40 times, and 7-byte ids straddle its end
    for (let i = 0; i < 5_000; i++) {
      const id = i % 3 === 0 ? randomHex(7) : newOpaqueId();
      expect(id).toMatch(i % 3 === 0 ? /^[0-9a-f]{14}$/ : /^[0-9a-f]{64}$/);
      expect(seen.has(id)).toBe(false);
      seen.add(id);
    }
  });

  it('is not all zeros nor a repeated pattern: the bytes handed out are zeroed in the pool, not in the ids', () => {
    const codes = Array.from({ length: 200 }, () => newAuthorizationCode());
    for (const code of codes) expect(code).not.toMatch(/^0+$/);
    // every hex digit shows up in a uniform sample of 200 × 64 digits
    const digits = new Set(codes.join(''));
    expect(digits.size).toBe(16);
  });

  it('a request larger than the pool allows is served directly', () => {
    const big = randomHex(2048);
    expect(big).toMatch(/^[0-9a-f]{4096}$/);
    expect(big).not.toMatch(/^0+$/);
  });
});
