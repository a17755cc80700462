import { getFromTarget } from './get-from-target';
import { resolveTarget, type OutboundPolicy } from './outbound-guard';

/** A public key of a JWK set, as read: its type and whatever else it says. */
export interface PublicJwk {
  kty: string;
  [member: string]: unknown;
}

/**
 * GETs the JWK set at `url` through the outbound guard (the address checked by `policy`, no redirect) and
 * gives its public keys: entries with a `kty` and no private part (`d`). Throws when the answer is not 200,
 * not JSON, or has no `keys` array; the caller says what that means for its own callers.
 */
export async function fetchPublicJwks(
  url: URL,
  policy: OutboundPolicy,
  options: { timeoutMs: number; maxBytes: number },
): Promise<PublicJwk[]> {
  const target = await resolveTarget(url, policy);
  const answer = await getFromTarget(url, target, { accept: 'application/jwk-set+json, application/json' }, options);
  if (answer.statusCode !== 200) throw new Error(`status ${answer.statusCode}`);
  const parsed = JSON.parse(answer.body) as { keys?: unknown };
  if (!Array.isArray(parsed.keys)) throw new Error('no keys array');
  return (parsed.keys as unknown[]).filter(
    (k): k is PublicJwk =>
      typeof k === 'object' && k !== null && typeof (k as PublicJwk).kty === 'string' && !('d' in k),
  );
}
