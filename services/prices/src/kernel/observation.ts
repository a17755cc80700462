/** One value of a price or FX rate as its source observed it: amount × 10^-decimals. */
export interface Observation {
  amount: string;
  decimals: number;
  source: string;
  observedAt: Date;
}

/** What one fetch of a source brings (and what is recorded together): quotes of pairs and USD → fiat rates. */
export interface FeedResult {
  quotes: { token: string; fiat: string; observation: Observation }[];
  fx: { fiat: string; observation: Observation }[];
}
