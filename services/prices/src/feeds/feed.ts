import type { Observation } from '../store/price-store';

export interface FeedResult {
  quotes: { token: string; fiat: string; observation: Observation }[];
  fx: { fiat: string; observation: Observation }[];
}

/** A price source: one call fetches what it knows now. */
export interface Feed {
  name: string;
  fetch(): Promise<FeedResult>;
}
