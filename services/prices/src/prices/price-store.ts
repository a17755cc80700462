import type { Queryable } from '@attest/common';
import type { Observation } from '../kernel/observation';

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

/** One stored write, in the order of the write sequence: a quote (with its token) or an FX rate (token null). */
export interface StoredWrite extends Observation {
  id: number;
  token: string | null;
  fiat: string;
  recordedAt: Date;
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
    /** The newest quote of a pair observed at or before `at` (any source), for the change over a window. */
    async quoteAt(token: string, fiat: string, at: Date): Promise<Observation | null> {
      const [row] = await db.query<Row>(
        `SELECT amount, decimals, source, observed_at FROM quotes
         WHERE token = $1 AND fiat = $2 AND observed_at <= $3 ORDER BY observed_at DESC, id DESC LIMIT 1`,
        [token, fiat, at],
      );
      return row ? toObservation(row) : null;
    },
    /** The write sequence's position: the largest id of quotes and FX rates (they share one sequence, 007). */
    async version(): Promise<number> {
      const [row] = await db.query<{ v: string | null }>(
        'SELECT GREATEST((SELECT max(id) FROM quotes), (SELECT max(id) FROM fx_rates)) AS v',
      );
      return Number(row?.v ?? 0);
    },
    /** Quotes and FX rates written after version `after` up to `upTo`, in write order, at most `limit`. */
    async writesSince(after: number, upTo: number, limit: number): Promise<StoredWrite[]> {
      const rows = await db.query<Row & { id: string; token: string | null; fiat: string; recorded_at: Date }>(
        `SELECT id, token, fiat, amount, decimals, source, observed_at, recorded_at FROM (
           SELECT id, token, fiat, amount, decimals, source, observed_at, recorded_at FROM quotes WHERE id > $1 AND id <= $2
           UNION ALL
           SELECT id, NULL, fiat, amount, decimals, source, observed_at, recorded_at FROM fx_rates WHERE id > $1 AND id <= $2
         ) w ORDER BY id LIMIT $3`,
        [after, upTo, limit],
      );
      return rows.map((r) => ({
        id: Number(r.id),
        token: r.token,
        fiat: r.fiat,
        recordedAt: r.recorded_at,
        ...toObservation(r),
      }));
    },
    /** What latestQuotes and latestFxRates answered when the write sequence stood at `version`. */
    async latestAsOf(version: number): Promise<{ quotes: PairObservation[]; fx: (Observation & { fiat: string })[] }> {
      const quotes = await db.query<Row & { token: string; fiat: string }>(
        `SELECT s.token, s.fiat, q.amount, q.decimals, q.source, q.observed_at
         FROM quote_sources s
         CROSS JOIN LATERAL (SELECT amount, decimals, source, observed_at FROM quotes
           WHERE token = s.token AND fiat = s.fiat AND source = s.source AND id <= $1 ORDER BY observed_at DESC, id DESC LIMIT 1) q
         ORDER BY s.token, s.fiat, s.source`,
        [version],
      );
      const fx = await db.query<Row & { fiat: string }>(
        `SELECT f.code AS fiat, r.amount, r.decimals, r.source, r.observed_at
         FROM fiat_currencies f
         CROSS JOIN LATERAL (SELECT amount, decimals, source, observed_at FROM fx_rates
           WHERE fiat = f.code AND id <= $1 ORDER BY observed_at DESC, id DESC LIMIT 1) r`,
        [version],
      );
      return {
        quotes: quotes.map((r) => ({ token: r.token, fiat: r.fiat, ...toObservation(r) })),
        fx: fx.map((r) => ({ fiat: r.fiat, ...toObservation(r) })),
      };
    },
    /** Per bucket of `intervalSeconds` since `from`: the last quote of each source in it, oldest bucket first. */
    async buckets(
      token: string,
      fiat: string,
      from: Date,
      intervalSeconds: number,
    ): Promise<(Observation & { bucket: number })[]> {
      const rows = await db.query<Row & { bucket: string }>(
        `SELECT DISTINCT ON (bucket, source) bucket, source, amount, decimals, observed_at
         FROM (SELECT floor(extract(epoch FROM observed_at) / $4)::bigint AS bucket, id, source, amount, decimals, observed_at
               FROM quotes WHERE token = $1 AND fiat = $2 AND observed_at >= $3) q
         ORDER BY bucket, source, observed_at DESC, id DESC`,
        [token, fiat, from, intervalSeconds],
      );
      return rows.map((r) => ({ bucket: Number(r.bucket), ...toObservation(r) }));
    },
    /**
     * Deletes quotes and FX rates observed before `cutoff`, except the latest of each source of each pair
     * (and of each fiat): what is served and reported stays. Returns the rows deleted.
     */
    async purgeBefore(cutoff: Date): Promise<number> {
      const quotes = await db.query<{ id: string }>(
        `DELETE FROM quotes q WHERE q.observed_at < $1 AND q.id <> (
           SELECT l.id FROM quotes l WHERE l.token = q.token AND l.fiat = q.fiat AND l.source = q.source
           ORDER BY l.observed_at DESC, l.id DESC LIMIT 1)
         RETURNING q.id`,
        [cutoff],
      );
      const fx = await db.query<{ id: string }>(
        `DELETE FROM fx_rates r WHERE r.observed_at < $1 AND r.id <> (
           SELECT l.id FROM fx_rates l WHERE l.fiat = r.fiat ORDER BY l.observed_at DESC, l.id DESC LIMIT 1)
         RETURNING r.id`,
        [cutoff],
      );
      return quotes.length + fx.length;
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
