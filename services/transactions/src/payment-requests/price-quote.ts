import { AppError } from '@attest/common';
import { SPEC_DECIMALS } from '../kernel/chain-tokens';

/** A token's price in a fiat currency: amount × 10^-decimals fiat units per token. */
export interface PriceQuote {
  amount: string;
  decimals: number;
  /** When the price's sources observed it (the prices service's observed_at). */
  observedAt: Date;
  /** Where it came from: the prices service's URL. */
  source: string;
}

export interface PriceSource {
  quote(token: string, fiat: string): Promise<PriceQuote>;
}

/** 503 price_unavailable with the reason; no request is priced from an old or unknown rate. */
export const priceUnavailable = (detail: string) =>
  new AppError('price_unavailable', 503, detail, 'currency', { headers: { 'Retry-After': '30' } });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * The prices service's public API (GET /public/v1/miniapps/prices), at PRICES_URL. It is the operator's
 * own service (configured, usually on a private address), not a URL an app gave, so the outbound guard,
 * which keeps app-given webhook URLs off private addresses, does not apply; the call has a timeout and a
 * size limit. A price older than maxAgeMs (by its observed_at) is refused, as is any error.
 */
export class HttpPriceSource implements PriceSource {
  constructor(
    private readonly baseUrl: string | undefined,
    private readonly options: { maxAgeMs: number; timeoutMs?: number; now?: () => number },
  ) {}

  async quote(token: string, fiat: string): Promise<PriceQuote> {
    if (!this.baseUrl)
      throw priceUnavailable(
        'No prices service is configured (PRICES_URL), so a fiat price cannot be converted; price the request in a token (token_amount).',
      );
    const url = new URL('/public/v1/miniapps/prices', this.baseUrl);
    url.searchParams.set('fiatCurrencies', fiat);
    url.searchParams.set('cryptoCurrencies', token);
    let status: number;
    let body: unknown;
    try {
      const res = await fetch(url, {
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 3000),
        headers: { accept: 'application/json' },
      });
      status = res.status;
      const text = await res.text();
      if (text.length > 65536) throw new Error('the answer is longer than 64 KiB');
      body = text ? JSON.parse(text) : null;
    } catch (err) {
      throw priceUnavailable(`The prices service did not answer (${(err as Error).message}); try again shortly.`);
    }
    if (status !== 200) {
      const detail = isObject(body) && typeof body.detail === 'string' ? body.detail : `HTTP ${status}`;
      throw priceUnavailable(`No fresh ${token}/${fiat} price: the prices service answered ${detail}`);
    }
    const result = isObject(body) && isObject(body.result) ? body.result : {};
    const prices = isObject(result.prices) && isObject(result.prices[token]) ? result.prices[token] : {};
    const observed =
      isObject(result.observed_at) && isObject(result.observed_at[token]) ? result.observed_at[token] : {};
    const price = prices[fiat];
    const at = typeof observed[fiat] === 'string' ? new Date(observed[fiat]) : null;
    if (
      !isObject(price) ||
      typeof price.amount !== 'string' ||
      !/^\d{1,40}$/.test(price.amount) ||
      BigInt(price.amount) === 0n ||
      typeof price.decimals !== 'number' ||
      !Number.isInteger(price.decimals) ||
      price.decimals < 0 ||
      price.decimals > 36 ||
      !at ||
      Number.isNaN(at.getTime())
    )
      throw priceUnavailable(`The prices service has no ${token}/${fiat} price.`);
    const ageMs = (this.options.now ?? Date.now)() - at.getTime();
    if (ageMs > this.options.maxAgeMs)
      throw priceUnavailable(
        `The ${token}/${fiat} price was observed at ${at.toISOString()}, more than ${Math.round(this.options.maxAgeMs / 1000)} s ago (PAYMENT_PRICE_MAX_AGE_SECONDS); an old rate is never used.`,
      );
    return { amount: price.amount, decimals: price.decimals, observedAt: at, source: url.origin };
  }
}

/** A decimal string (`12.5`) as an integer and its number of decimals. */
function decimal(value: string): { units: bigint; decimals: number } {
  const [whole, fraction = ''] = value.split('.');
  return { units: BigInt(whole + fraction), decimals: fraction.length };
}

/**
 * The token amount (6 decimals, SPEC 2.5) a fiat price costs at `quote`, rounded up to what a token of
 * `tokenDecimals` decimals can carry (the merchant is never paid less than the price).
 */
export function tokenAmountFor(
  fiatAmount: string,
  quote: Pick<PriceQuote, 'amount' | 'decimals'>,
  tokenDecimals: number,
): bigint {
  const fiat = decimal(fiatAmount);
  const numerator = fiat.units * 10n ** BigInt(quote.decimals + SPEC_DECIMALS);
  const denominator = BigInt(quote.amount) * 10n ** BigInt(fiat.decimals);
  let amount = (numerator + denominator - 1n) / denominator;
  if (tokenDecimals < SPEC_DECIMALS) {
    const unit = 10n ** BigInt(SPEC_DECIMALS - tokenDecimals);
    amount = ((amount + unit - 1n) / unit) * unit;
  }
  return amount;
}
