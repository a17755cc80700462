import { apiKeyHasher, newApiKey, parseApiKey } from '../src/kernel/api-keys/api-keys';

describe('API key hashes', () => {
  const hasher = apiKeyHasher('server-secret-0123456789abcdef0123456789');

  it('match only the same keyed hash', () => {
    const { apiKey, secret: keySecret } = newApiKey();
    const stored = hasher.hex(keySecret);
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    const presented = parseApiKey(apiKey)!.secret;
    expect(presented).toBe(keySecret);
    expect(hasher.matches(presented, stored)).toBe(true);
    const oneDigitOff = `${stored.slice(0, 63)}${stored[63] === '0' ? '1' : '0'}`;
    expect(hasher.matches(presented, oneDigitOff)).toBe(false);
    expect(hasher.matches(`${presented}0`, stored)).toBe(false);
    const otherServer = apiKeyHasher('another-server-secret-0123456789abcdef');
    expect(otherServer.hex(keySecret)).not.toBe(stored);
    expect(otherServer.matches(presented, stored)).toBe(false);
  });

  it('never match a stored hash that is not 64 hexadecimal digits', () => {
    const stored = hasher.hex('sk_x');
    expect(hasher.matches('sk_x', stored)).toBe(true);
    expect(hasher.matches('sk_x', stored.slice(0, 62))).toBe(false);
    expect(hasher.matches('sk_x', `${stored}00`)).toBe(false);
    expect(hasher.matches('sk_x', '')).toBe(false);
    expect(hasher.matches('sk_x', stored.toUpperCase())).toBe(false);
  });
});
