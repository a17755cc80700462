import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadPricesConfig, type PriceSourceConfig } from '../src/config';
import { configuredFeeds } from '../src/feeds';

/**
 * Every PRICE_SOURCES example docs/deploy.md gives (each code span or block holding a JSON array of sources,
 * alone or as `PRICE_SOURCES='…'`) is run against a local stand-in of its provider, answering in the shape
 * that provider documents, and must yield a price (issue 40, item 12). A new example is covered by itself;
 * one for a provider without a stand-in here fails, naming the host.
 */
const deployMd = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'deploy.md'), 'utf8');

function documentedExamples(markdown: string): PriceSourceConfig[][] {
  const snippets = [
    ...[...markdown.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]),
    ...[...markdown.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]),
  ];
  const found: PriceSourceConfig[][] = [];
  for (const snippet of snippets) {
    const candidates = [
      snippet.trim(),
      ...[...snippet.matchAll(/PRICE_SOURCES=(['"]?)(\[.*?\])\1/gs)].map((m) => m[2]),
    ];
    for (const text of candidates) {
      if (!text.startsWith('[{')) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        continue;
      }
      if (Array.isArray(value) && value.every((s) => typeof s === 'object' && s && 'url' in s && 'price' in s))
        found.push(value as PriceSourceConfig[]);
    }
  }
  return found;
}

type Query = URLSearchParams;
interface Provider {
  /** The documented request path; anything else is answered as the provider does (an error). */
  path: string;
  /** The headers the provider requires (an API key): a request without them is refused. */
  requiredHeaders: string[];
  /** The provider's documented answer to the query, with `price` as every price. */
  answer(query: Query, price: string, time: string): unknown;
}

const list = (q: Query, name: string) => (q.get(name) ?? '').split(',').filter(Boolean);

/** Stand-ins by the host of the documented URL. */
const PROVIDERS: Record<string, Provider> = {
  // CoinMarketCap v2 /cryptocurrency/quotes/latest by `symbol`: `data` maps each symbol to an ARRAY of the
  // coins with that symbol, each with `quote.<CONVERT>.price` and `last_updated`
  'pro-api.coinmarketcap.com': {
    path: '/v2/cryptocurrency/quotes/latest',
    requiredHeaders: ['x-cmc_pro_api_key'],
    answer: (q, price, time) => ({
      status: { timestamp: time, error_code: 0, error_message: null, elapsed: 10, credit_count: 1, notice: null },
      data: Object.fromEntries(
        list(q, 'symbol').map((symbol) => [
          symbol,
          [
            {
              id: 1000,
              name: `${symbol} coin`,
              symbol,
              slug: symbol.toLowerCase(),
              is_active: 1,
              last_updated: time,
              quote: Object.fromEntries(
                list(q, 'convert').map((fiat) => [
                  fiat,
                  { price: Number(price), volume_24h: 1000000, percent_change_24h: -1.2, last_updated: time },
                ]),
              ),
            },
          ],
        ]),
      ),
    }),
  },
  // CoinGecko /api/v3/simple/price: `<id>.<fiat>` and `<id>.last_updated_at` (Unix seconds)
  'api.coingecko.com': {
    path: '/api/v3/simple/price',
    requiredHeaders: [],
    answer: (q, price, time) =>
      Object.fromEntries(
        list(q, 'ids').map((id) => [
          id,
          {
            ...Object.fromEntries(list(q, 'vs_currencies').map((fiat) => [fiat, Number(price)])),
            last_updated_at: Math.floor(Date.parse(time) / 1000),
          },
        ]),
      ),
  },
};

describe('docs/deploy.md: every PRICE_SOURCES example yields a price from its provider’s documented answer', () => {
  const examples = documentedExamples(deployMd);

  it('finds the documented examples (CoinMarketCap among them)', () => {
    expect(examples.length).toBeGreaterThan(0);
    expect(examples.flat().map((s) => new URL(s.url).host)).toContain('pro-api.coinmarketcap.com');
  });

  it.each(examples.flat().map((source) => [source.name, source] as const))('the %s example', async (_name, source) => {
    const host = new URL(source.url).host;
    const provider = PROVIDERS[host];
    if (!provider) throw new Error(`no stand-in for ${host}: add its documented answer to PROVIDERS`);
    const time = new Date(Date.now() - 30_000).toISOString().replace(/\.\d+Z$/, '.000Z');
    const seen: { path: string; headers: http.IncomingHttpHeaders }[] = [];
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      seen.push({ path: url.pathname, headers: req.headers });
      if (url.pathname !== provider.path) return void res.writeHead(404).end('{"error":"not found"}');
      if (provider.requiredHeaders.some((h) => !req.headers[h]))
        return void res.writeHead(401).end('{"status":{"error_code":1002,"error_message":"API key missing."}}');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(provider.answer(url.searchParams, '2.345678', time)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      // the example's own request, sent here; an API key placeholder ("…") becomes a key
      const headers = source.headers && Object.fromEntries(Object.keys(source.headers).map((h) => [h, 'stand-in-key']));
      const local = { ...source, headers, url: source.url.replace(/^https?:\/\/[^/]+/, origin) };
      const config = loadPricesConfig({
        PRICE_FEEDS: source.name,
        PRICE_SOURCES: JSON.stringify([local]),
        PRICE_HTTP_FIATS: 'USD,EUR',
        PRICE_HTTP_RETRIES: '0',
        LOG_LEVEL: 'silent',
      });
      const [feed] = configuredFeeds(config);
      const result = await feed.fetch();
      expect(seen.map((s) => s.path)).toEqual([provider.path]);
      const fiats = (source.fiats ?? ['USD', 'EUR']).map((f) => f.toUpperCase());
      const expected = Object.keys(source.ids).flatMap((token) =>
        fiats.map((fiat) => ({
          token: token.toUpperCase(),
          fiat,
          observation: { amount: '2345678', decimals: 6, source: source.name, observedAt: new Date(time) },
        })),
      );
      expect(result.quotes).toEqual(expect.arrayContaining(expected));
      expect(result.quotes).toHaveLength(expected.length);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
