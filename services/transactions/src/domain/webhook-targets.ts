import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Why a URL cannot be a webhook endpoint, as a sentence naming `url`; null when it can. */
export function endpointUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute https URL.';
  }
  if (url.username || url.password) return 'url must not contain a user name or password.';
  if (url.hash) return 'url must not contain a fragment (#…).';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:')
    return isLoopbackHost(url.hostname)
      ? null
      : 'url must be https (plain http only on loopback: localhost, 127.0.0.1, [::1]).';
  return 'url must be an https URL.';
}

const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

function isLoopbackHost(hostname: string): boolean {
  const host = bare(hostname).toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && LOOPBACK.check(host, isIP(host) === 4 ? 'ipv4' : 'ipv6');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Loopback, private, link-local, shared, reserved, multicast and unspecified ranges (IPv4 and IPv6). */
const NOT_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const)
  NOT_PUBLIC.addSubnet(net, bits, 'ipv6');

/** True for an address a webhook must not reach unless WEBHOOK_ALLOW_PRIVATE allows it. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NOT_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return true;
  const lower = address.toLowerCase();
  // IPv4-mapped (::ffff:a.b.c.d or ::ffff:xxxx:xxxx) and NAT64 (64:ff9b::/96) carry an IPv4 address
  const embedded = /^(?:::ffff:|64:ff9b::)(?:0:)?(.+)$/.exec(lower)?.[1];
  if (embedded) {
    if (isIP(embedded) === 4) return NOT_PUBLIC.check(embedded, 'ipv4');
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(embedded);
    if (hex) {
      const n = (parseInt(hex[1], 16) << 16) | parseInt(hex[2], 16);
      return NOT_PUBLIC.check([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'), 'ipv4');
    }
  }
  return NOT_PUBLIC.check(address, 'ipv6');
}

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

export class TargetRefused extends Error {}

export type Lookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Resolves the endpoint's host now (on every attempt) and checks every address it resolves to; the
 * delivery then connects to the address returned, so a DNS answer that changes between the check and
 * the connection (rebinding) cannot redirect it.
 */
export async function resolveTarget(
  url: URL,
  allowPrivate: boolean,
  lookup: Lookup = systemLookup,
): Promise<ResolvedTarget> {
  const host = bare(url.hostname);
  const literal = isIP(host);
  const addresses = literal ? [{ address: host, family: literal }] : await lookup(host);
  if (addresses.length === 0) throw new TargetRefused(`${host} has no address`);
  if (!allowPrivate) {
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused)
      throw new TargetRefused(
        `refused: ${host} resolves to a non-public address (${refused.address}); WEBHOOK_ALLOW_PRIVATE=true allows it`,
      );
  }
  const chosen = addresses[0];
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
