import { checksumAddress } from './address';

/** How the watcher recognises a payment in one token: a `Transfer` log of a contract, or the native value. */
export type TokenConfig =
  { kind: 'erc20'; address: `0x${string}`; decimals: number } | { kind: 'native'; decimals: number };

/** Token code (upper case) → token, per chain name. */
export type ChainTokens = Readonly<Record<string, Readonly<Record<string, TokenConfig>>>>;

/** Amounts in SPEC 2.5 carry 6 decimals, whatever the token's own. */
export const SPEC_DECIMALS = 6;

const CHAIN = /^[a-z0-9-]{1,50}$/;
const TOKEN = /^[A-Z0-9]{2,12}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseToken(where: string, raw: unknown): TokenConfig | string {
  if (!isObject(raw)) return `${where} must be an object such as {"address":"0x…","decimals":6} or {"native":true}`;
  const extra = Object.keys(raw).find((k) => !['address', 'decimals', 'native'].includes(k));
  if (extra) return `${where} has an unknown field ${extra}`;
  const decimals = raw.decimals ?? (raw.native === true ? 18 : undefined);
  if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 36)
    return `${where}.decimals must be an integer from 0 to 36`;
  if (raw.native === true)
    return raw.address === undefined ? { kind: 'native', decimals } : `${where} is native and must have no address`;
  if (raw.native !== undefined) return `${where}.native must be true or left out`;
  if (typeof raw.address !== 'string' || !ADDRESS.test(raw.address))
    return `${where}.address must be 0x followed by 40 hexadecimal digits`;
  return { kind: 'erc20', address: checksumAddress(raw.address), decimals };
}

/**
 * CHAIN_TOKENS: `{"<chain>": {"<TOKEN>": {"address": "0x…", "decimals": 6} | {"native": true, "decimals": 18}}}`.
 * Returns the tokens, or a sentence saying what is wrong.
 */
export function parseChainTokens(json: string): ChainTokens | string {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return 'must be JSON';
  }
  if (!isObject(raw) || Object.keys(raw).length === 0) return 'must be a JSON object of chain names';
  const chains: Record<string, Record<string, TokenConfig>> = {};
  for (const [chain, tokens] of Object.entries(raw)) {
    if (!CHAIN.test(chain)) return `has a chain name that is not lowercase letters, digits and -: ${chain}`;
    if (!isObject(tokens) || Object.keys(tokens).length === 0) return `${chain} must be an object of token codes`;
    chains[chain] = {};
    for (const [code, token] of Object.entries(tokens)) {
      if (!TOKEN.test(code))
        return `${chain} has a token code that is not 2 to 12 upper-case letters or digits: ${code}`;
      const parsed = parseToken(`${chain}.${code}`, token);
      if (typeof parsed === 'string') return parsed;
      chains[chain][code] = Object.freeze(parsed);
    }
    Object.freeze(chains[chain]);
  }
  return Object.freeze(chains);
}

/** True when `onChain` base units of a token with `decimals` decimals are exactly `tokenAmount` (6 decimals). */
export function sameAmount(tokenAmount: bigint, onChain: bigint, decimals: number): boolean {
  return onChain * 10n ** BigInt(SPEC_DECIMALS) === tokenAmount * 10n ** BigInt(decimals);
}

/** True when a 6-decimal amount can be paid in a token with fewer decimals (no digits below its smallest unit). */
export function representable(tokenAmount: bigint, decimals: number): boolean {
  return decimals >= SPEC_DECIMALS || tokenAmount % 10n ** BigInt(SPEC_DECIMALS - decimals) === 0n;
}

/** World Chain mainnet (chain id 480): bridged USDC (USDCE) and WLD, and its native ETH; CHAIN_TOKENS's default. */
export const DEFAULT_CHAIN_TOKENS_JSON = JSON.stringify({
  worldchain: {
    USDCE: { address: '0x79A02482A880bCE3F13e09Da970dC34db4CD24d1', decimals: 6 },
    WLD: { address: '0x2cFc85d8E48F8EAB294be644d9E25C3030863003', decimals: 18 },
    ETH: { native: true, decimals: 18 },
  },
});

export const DEFAULT_CHAIN_TOKENS = parseChainTokens(DEFAULT_CHAIN_TOKENS_JSON) as ChainTokens;
