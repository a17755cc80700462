import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPrivateAddress } from './addresses';

/**
 * Where a service may send requests it is asked to send (webhooks, back-channel logout). One guard
 * for all of them: the URL is judged when it is registered (scheme, credentials, fragment, and a host
 * that is an IP literal), and again, with DNS, on every delivery (`resolveTarget`), which then
 * connects to the address it checked.
 */
export interface OutboundPolicy {
  /** Plain http, to a loopback host only: the embedded development mode (no DATABASE_URL), never with a database. */
  allowHttp: boolean;
  /** Private, loopback and link-local targets (e.g. WEBHOOK_ALLOW_PRIVATE; the default in embedded mode). */
  allowPrivate: boolean;
  /** The setting that allows private targets, named in refusals. */
  allowPrivateSetting: string;
}

const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

function isLoopbackHost(hostname: string): boolean {
  const host = bare(hostname).toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/**
 * Why `raw` cannot be the target of outbound requests, as a sentence naming `field`; null when it can.
 * A host written as an IP address is judged here, once, so a private one is refused at registration
 * rather than tried (and refused) on every delivery.
 */
export function outboundUrlProblem(raw: string, field: string, policy: OutboundPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${field} must be an absolute https URL.`;
  }
  if (url.username || url.password) return `${field} must not contain a user name or password.`;
  if (url.hash) return `${field} must not contain a fragment (#…).`;
  if (url.protocol === 'http:') {
    if (!policy.allowHttp) return `${field} must be https (plain http only in the embedded development mode).`;
    if (!isLoopbackHost(url.hostname))
      return `${field} must be https (plain http only on loopback: localhost, 127.0.0.1, [::1]).`;
  } else if (url.protocol !== 'https:') return `${field} must be an https URL.`;
  const host = bare(url.hostname);
  if (!policy.allowPrivate && isIP(host) && isPrivateAddress(host))
    return `${field} must not point to a non-public address (${host}); ${policy.allowPrivateSetting}=true allows it.`;
  return null;
}

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

export class TargetRefused extends Error {}

export type Lookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Resolves the target's host now (on every attempt) and checks every address it resolves to; the
 * request then connects to the address returned (`postToTarget`), so a DNS answer that changes
 * between the check and the connection (rebinding) cannot redirect it. A URL registered before the
 * rules it breaks (plain http with a database) is refused here too.
 */
export async function resolveTarget(
  url: URL,
  policy: OutboundPolicy,
  lookup: Lookup = systemLookup,
): Promise<ResolvedTarget> {
  const problem = outboundUrlProblem(url.href, 'the URL', policy);
  if (problem) throw new TargetRefused(`refused: ${problem}`);
  const host = bare(url.hostname);
  const literal = isIP(host);
  const addresses = literal ? [{ address: host, family: literal }] : await lookup(host);
  if (addresses.length === 0) throw new TargetRefused(`${host} has no address`);
  if (!policy.allowPrivate) {
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused)
      throw new TargetRefused(
        `refused: ${host} resolves to a non-public address (${refused.address}); ${policy.allowPrivateSetting}=true allows it`,
      );
  }
  const chosen = addresses[0];
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
