import { hashApiKeySecret, newApiKey, parseApiKey, sameKeyHash } from '../src/domain/api-keys';

describe('API key hashes', () => {
  const secret = 'server-secret-0123456789abcdef0123456789';

  it('match only the same keyed hash', () => {
    const { apiKey, secret: keySecret } = newApiKey();
    const stored = hashApiKeySecret(secret, keySecret);
    const presented = hashApiKeySecret(secret, parseApiKey(apiKey)!.secret);
    expect(sameKeyHash(presented, stored)).toBe(true);
    const oneDigitOff = `${stored.slice(0, 63)}${stored[63] === '0' ? '1' : '0'}`;
    expect(sameKeyHash(presented, oneDigitOff)).toBe(false);
    expect(sameKeyHash(presented, hashApiKeySecret('another-server-secret-0123456789abcdef', keySecret))).toBe(false);
  });

  it('refuse anything that is not 64 hexadecimal digits', () => {
    const stored = hashApiKeySecret(secret, 'sk_x');
    expect(sameKeyHash(stored.slice(0, 62), stored)).toBe(false);
    expect(sameKeyHash(stored, '')).toBe(false);
    expect(sameKeyHash(stored.toUpperCase(), stored)).toBe(false);
  });
});
