import fs from 'node:fs';
import path from 'node:path';
import { parseDecimal } from '../kernel/decimal';
import type { Feed, FeedResult } from './feed';

export const DEFAULT_SEED_FILE = path.join(__dirname, '..', '..', 'seed', 'prices.json');

interface SeedFile {
  quotes: { token: string; fiat: string; amount: string }[];
  fx: { fiat: string; rate: string }[];
}

/**
 * Static prices from a JSON file, observed "now" on every run: the embedded default so a fresh
 * `pnpm start` serves realistic prices at once. Its source is labelled `seed`; it is demo data, not a market.
 */
export function seedFeed(file = DEFAULT_SEED_FILE): Feed {
  const seed = JSON.parse(fs.readFileSync(file, 'utf8')) as SeedFile;
  const parse = (value: string, what: string) => {
    const fixed = parseDecimal(value);
    if (!fixed) throw new Error(`Seed file ${file}: ${what} is not a decimal number: ${value}`);
    return fixed;
  };
  const quotes = seed.quotes.map((q) => ({
    token: q.token.toUpperCase(),
    fiat: q.fiat.toUpperCase(),
    fixed: parse(q.amount, `${q.token}/${q.fiat}`),
  }));
  const fx = seed.fx.map((r) => ({ fiat: r.fiat.toUpperCase(), fixed: parse(r.rate, `USD/${r.fiat}`) }));
  return {
    name: 'seed',
    async fetch(): Promise<FeedResult> {
      const observedAt = new Date();
      const obs = (f: { amount: bigint; decimals: number }) => ({
        amount: f.amount.toString(),
        decimals: f.decimals,
        source: 'seed',
        observedAt,
      });
      return {
        quotes: quotes.map((q) => ({ token: q.token, fiat: q.fiat, observation: obs(q.fixed) })),
        fx: fx.map((r) => ({ fiat: r.fiat, observation: obs(r.fixed) })),
      };
    },
  };
}
