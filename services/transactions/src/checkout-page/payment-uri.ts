import { SPEC_DECIMALS, type ChainTokens, type TokenConfig } from '../kernel/chain-tokens';

/** An amount with 6 decimals (token_amount) in the token's own base units. */
export const baseUnits = (amount: bigint, decimals: number): bigint =>
  decimals >= SPEC_DECIMALS
    ? amount * 10n ** BigInt(decimals - SPEC_DECIMALS)
    : amount / 10n ** BigInt(SPEC_DECIMALS - decimals);

/**
 * The EIP-681 payment URI a wallet opens to pay `amount` (6 decimals) of a token to `to` on chain `chainId`:
 * an ERC-20 `transfer` call (`ethereum:<token>@<chainId>/transfer?address=<to>&uint256=<base units>`), or a
 * native transfer (`ethereum:<to>@<chainId>?value=<wei>`).
 */
export function paymentUri(token: TokenConfig, chainId: number, to: string, amount: bigint): string {
  const units = baseUnits(amount, token.decimals).toString();
  return token.kind === 'erc20'
    ? `ethereum:${token.address}@${chainId}/transfer?address=${to}&uint256=${units}`
    : `ethereum:${to}@${chainId}?value=${units}`;
}

/** What a payment request's JSON carries to be paid: its page and each accepted token's EIP-681 URI. */
export interface CheckoutLinks {
  payment_url: string;
  /** Token code → EIP-681 URI; a token of a chain without a chain id (CHAIN_IDS) has none. */
  payment_uri: Record<string, string>;
}

/** The links of a request, from API_URL, CHAIN_TOKENS and CHAIN_IDS. */
export function checkoutLinks(apiUrl: string, tokens: ChainTokens, chainIds: Readonly<Record<string, number>>) {
  const base = apiUrl.replace(/\/+$/, '');
  return (r: { id: string; chain: string; to: string; accepted: readonly { token: string; amountDue: string }[] }) => {
    const chainId = chainIds[r.chain];
    const uris: Record<string, string> = {};
    for (const a of r.accepted) {
      const token = tokens[r.chain]?.[a.token];
      if (token && chainId !== undefined) uris[a.token] = paymentUri(token, chainId, r.to, BigInt(a.amountDue));
    }
    return { payment_url: `${base}/pay/${r.id}`, payment_uri: uris } satisfies CheckoutLinks;
  };
}
