import type { Queryable } from '@attest/common';

export interface Observation {
  amount: string;
  decimals: number;
  source: string;
  observedAt: Date;
}

interface Row {
  amount: string;
  decimals: number;
  source: string;
  observed_at: Date;
}

export interface PairObservation extends Observation {
  token: string;
  fiat: string;
}

const toObservation = (r: Row): Observation => ({
  amount: String(r.amount),
  decimals: r.decimals,
  source: r.source,
  observedAt: r.observed_at,
});

export function priceStore(db: Queryable) {
  return {
    async tokens(): Promise<string[]> {
      return (await db.query<{ code: string }>('SELECT code FROM tokens ORDER BY code')).map((r) => r.code);
    },
    async fiats(): Promise<string[]> {
      return (await db.query<{ code: string }>('SELECT code FROM fiat_currencies ORDER BY code')).map((r) => r.code);
    },
    async insertQuote(token: string, fiat: string, o: Observation): Promise<void> {
      await db.query(
        'INSERT INTO quotes (token, fiat, amount, decimals, source, observed_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [token, fiat, o.amount, o.decimals, o.source, o.observedAt],
      );
    },
    async latestQuote(token: string, fiat: string): Promise<Observation | null> {
      const [row] = await db.query<Row>(
        'SELECT amount, decimals, source, observed_at FROM quotes WHERE token = $1 AND fiat = $2 ORDER BY observed_at DESC, id DESC LIMIT 1',
        [token, fiat],
      );
      return row ? toObservation(row) : null;
    },
    async insertFx(fiat: string, o: Observation): Promise<void> {
      await db.query('INSERT INTO fx_rates (fiat, amount, decimals, source, observed_at) VALUES ($1, $2, $3, $4, $5)', [
        fiat,
        o.amount,
        o.decimals,
        o.source,
        o.observedAt,
      ]);
    },
    async latestFx(fiat: string): Promise<Observation | null> {
      const [row] = await db.query<Row>(
        'SELECT amount, decimals, source, observed_at FROM fx_rates WHERE fiat = $1 ORDER BY observed_at DESC, id DESC LIMIT 1',
        [fiat],
      );
      return row ? toObservation(row) : null;
    },
    /**
     * The latest quote of every source of every pair: one probe of quotes_source_idx per (token, fiat,
     * source) that ever quoted, so the cost does not grow with the history kept.
     */
    async latestQuotes(): Promise<PairObservation[]> {
      const rows = await db.query<Row & { token: string; fiat: string }>(
        `SELECT s.token, s.fiat, q.amount, q.decimals, q.source, q.observed_at
         FROM quote_sources s
         CROSS JOIN LATERAL (SELECT amount, decimals, source, observed_at FROM quotes
           WHERE token = s.token AND fiat = s.fiat AND source = s.source ORDER BY observed_at DESC, id DESC LIMIT 1) q
         ORDER BY s.token, s.fiat, s.source`,
      );
      return rows.map((r) => ({ token: r.token, fiat: r.fiat, ...toObservation(r) }));
    },
    /** The latest USD → fiat rate of every currency: one probe of fx_rates_latest_idx each. */
    async latestFxRates(): Promise<(Observation & { fiat: string })[]> {
      const rows = await db.query<Row & { fiat: string }>(
        `SELECT f.code AS fiat, r.amount, r.decimals, r.source, r.observed_at
         FROM fiat_currencies f
         CROSS JOIN LATERAL (SELECT amount, decimals, source, observed_at FROM fx_rates
           WHERE fiat = f.code ORDER BY observed_at DESC, id DESC LIMIT 1) r`,
      );
      return rows.map((r) => ({ fiat: r.fiat, ...toObservation(r) }));
    },
    async history(token: string, fiat: string, limit: number): Promise<Observation[]> {
      const rows = await db.query<Row>(
        'SELECT amount, decimals, source, observed_at FROM quotes WHERE token = $1 AND fiat = $2 ORDER BY observed_at DESC, id DESC LIMIT $3',
        [token, fiat, limit],
      );
      return rows.map(toObservation);
    },
  };
}
export type PriceStore = ReturnType<typeof priceStore>;
