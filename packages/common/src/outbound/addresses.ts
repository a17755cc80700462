import { BlockList, isIP } from 'node:net';

/** Loopback, private, link-local, shared, reserved, documentation, multicast and unspecified IPv4 ranges. */
const NOT_PUBLIC_V4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC_V4.addSubnet(net, bits, 'ipv4');

/**
 * IPv6 ranges that are not a public host of their own: loopback, unspecified, IPv4-compatible (::/96,
 * deprecated; `::127.0.0.1` reaches loopback on some stacks), discard-only (100::/64), Teredo
 * (2001::/32) and 6to4 (2002::/16) tunnels (each embeds an IPv4 address a relay would reach),
 * local-use NAT64 (64:ff9b:1::/48, translated inside the operator's network), documentation,
 * unique-local, link-local, site-local and multicast.
 */
const NOT_PUBLIC_V6 = new BlockList();
for (const [net, bits] of [
  ['::', 96],
  ['100::', 64],
  ['64:ff9b:1::', 48],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC_V6.addSubnet(net, bits, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address.split('%')[0].toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = text.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return groups.length === 8 ? groups.map((g) => parseInt(g, 16)) : null;
}

const v4Of = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');

/**
 * True for an address an outbound request (webhook, back-channel logout) must not reach unless the
 * deployment allows private targets. IPv4-mapped (::ffff:0:0/96) and well-known NAT64 (64:ff9b::/96)
 * addresses are judged by the IPv4 address they carry; anything that is not an address is refused.
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NOT_PUBLIC_V4.check(address, 'ipv4');
  if (family !== 6) return true;
  const g = ipv6Groups(address);
  if (!g) return true;
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
  // IPv4-translated (::ffff:0:0:0/96, RFC 2765 SIIT): judged by the IPv4 address it carries, as a mapped one
  const translated = g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  if (mapped || translated || nat64) return NOT_PUBLIC_V4.check(v4Of(g[6], g[7]), 'ipv4');
  const canonical = g.map((x) => x.toString(16)).join(':');
  return NOT_PUBLIC_V6.check(canonical, 'ipv6');
}
