import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the prices service's public API (GET /public/v1/miniapps/prices): each token's price in
 * any fiat currency as set in `prices`, observed at `observedAt(token)`; a token without a price is
 * answered 404 price_unavailable, as the prices service does, and every token so while `status` is set
 * to another status than 200 (the service unavailable: 503).
 */
export class PriceStub {
  prices: Record<string, { amount: string; decimals: number }> = {};
  observedAt: (token: string) => Date = () => new Date();
  status = 200;
  readonly server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    if (url.pathname !== '/public/v1/miniapps/prices') return void res.writeHead(404).end();
    const [token, fiat] = [url.searchParams.get('cryptoCurrencies')!, url.searchParams.get('fiatCurrencies')!];
    const price = this.prices[token];
    if (!price || this.status !== 200) {
      res.writeHead(this.status !== 200 ? this.status : 404, { 'content-type': 'application/json' });
      return void res.end(
        JSON.stringify({ code: 'price_unavailable', detail: `No fresh price for ${token}/${fiat}; try again later.` }),
      );
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        result: {
          prices: { [token]: { [fiat]: { asset: fiat, symbol: fiat, ...price } } },
          observed_at: { [token]: { [fiat]: this.observedAt(token).toISOString() } },
        },
      }),
    );
  });
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
