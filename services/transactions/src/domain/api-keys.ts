import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

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

/** Keyed hash of the secret part; the key itself is never stored. */
export const hashApiKeySecret = (serverSecret: string, secret: string) =>
  createHmac('sha256', serverSecret).update(`api-key:${secret}`).digest('hex');

const HASH = /^[0-9a-f]{64}$/;

/** Constant-time equality of two keyed hashes (64 hex digits each, so no length to hide); false for anything else. */
export function sameKeyHash(presented: string, stored: string): boolean {
  if (!HASH.test(presented) || !HASH.test(stored)) return false;
  return timingSafeEqual(Buffer.from(presented, 'hex'), Buffer.from(stored, 'hex'));
}
