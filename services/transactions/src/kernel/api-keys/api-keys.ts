import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

export interface ParsedApiKey {
  keyId: string;
  secret: string;
}

const INNER = /^(key_[0-9a-f]{32}):(sk_[0-9a-f]{48})$/;

/** `api_` + base64url(`key_<32 hex>:sk_<48 hex>`). */
export function newApiKey(): { apiKey: string; keyId: string; secret: string } {
  const keyId = `key_${randomBytes(16).toString('hex')}`;
  const secret = `sk_${randomBytes(24).toString('hex')}`;
  return { apiKey: `api_${Buffer.from(`${keyId}:${secret}`).toString('base64url')}`, keyId, secret };
}

export function parseApiKey(apiKey: string): ParsedApiKey | null {
  if (!/^api_[A-Za-z0-9_-]{20,200}$/.test(apiKey)) return null;
  const match = INNER.exec(Buffer.from(apiKey.slice(4), 'base64url').toString('utf8'));
  return match ? { keyId: match[1], secret: match[2] } : null;
}

export interface ApiKeyHasher {
  hex(secret: string): string;
  matches(secret: string, stored: string): boolean;
}

/**
 * The keyed hash of an API key's secret part (the key itself is never stored), with its key prepared
 * once (createHmac given a string converts it on every call, which the lookup's profile showed): `hex`
 * for storing, `matches` for checking a presented secret against a stored hash (64 hexadecimal
 * digits; anything else never matches) in constant time.
 */
export function apiKeyHasher(serverSecret: string): ApiKeyHasher {
  const key: KeyObject = createSecretKey(Buffer.from(serverSecret, 'utf8'));
  const digest = (secret: string) => createHmac('sha256', key).update(`api-key:${secret}`).digest();
  return {
    hex: (secret) => digest(secret).toString('hex'),
    matches: (secret, stored) => {
      const presented = digest(secret);
      // a malformed stored hash still costs one comparison, against a copy of the presented one
      const valid = HASH.test(stored);
      return timingSafeEqual(presented, valid ? Buffer.from(stored, 'hex') : Buffer.from(presented)) && valid;
    },
  };
}

const HASH = /^[0-9a-f]{64}$/;
