import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secrets: `whsec_` + base64 of 32 random bytes (the HMAC key). */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

const keyOf = (secret: string) => Buffer.from(secret.replace(/^whsec_/, ''), 'base64');

/**
 * The `webhook-signature` value: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` for each secret,
 * space-separated (two during a rotation), as Standard Webhooks verifiers expect.
 */
export function webhookSignature(secrets: string[], messageId: string, timestampSeconds: number, body: string): string {
  const signed = `${messageId}.${timestampSeconds}.${body}`;
  return secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(signed).digest('base64')}`).join(' ');
}

/** The headers of one attempt; the timestamp is the attempt's own, so each retry is signed afresh. */
export function webhookHeaders(
  secrets: string[],
  messageId: string,
  body: string,
  now = new Date(),
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'Attest-Webhooks/1',
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignature(secrets, messageId, timestamp, body),
  };
}
