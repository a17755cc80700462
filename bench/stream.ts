/**
 * The stream fan-out row (issue 26): N subscribers of GET /public/v1/prices/stream on one prices process,
 * then one price change; measured: how long until every subscriber has the new event, and the process's
 * resident memory with the subscribers connected.
 */
import http from 'node:http';

export interface StreamFanOut {
  subscribers: number;
  /** Streams that delivered the initial event. */
  connected: number;
  /** From the change being set to its event at the first and the last subscriber, and the median. */
  firstMs: number;
  medianMs: number;
  lastMs: number;
  /** Subscribers that never saw the change (or failed). */
  missed: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Opens `subscribers` streams (a few hundred at a time), waits for each one's initial event, calls
 * `change` (which sets a new price), and waits up to `timeoutMs` for the change's event everywhere.
 * `withOpen` runs while all streams are open (a memory reading).
 */
export async function streamFanOut(
  origin: string,
  subscribers: number,
  change: () => Promise<void>,
  withOpen: () => void,
  timeoutMs = 30_000,
): Promise<StreamFanOut> {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const url = `${origin}/public/v1/prices/stream?fiatCurrencies=USD`;
  const requests: http.ClientRequest[] = [];
  const seen: number[] = new Array<number>(subscribers).fill(0);
  const changedAt: (number | undefined)[] = new Array<number | undefined>(subscribers);
  let connected = 0;
  let changeSetAt = Infinity;
  const open = (i: number) =>
    new Promise<void>((resolve) => {
      const req = http.get(url, { agent }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return resolve();
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          for (let at = chunk.indexOf('event: price'); at >= 0; at = chunk.indexOf('event: price', at + 1)) {
            seen[i]++;
            if (seen[i] === 1) {
              connected++;
              resolve();
            } else if (changedAt[i] === undefined && Date.now() >= changeSetAt) changedAt[i] = Date.now();
          }
        });
        res.on('error', () => resolve());
      });
      req.on('error', () => resolve());
      requests.push(req);
    });
  try {
    for (let i = 0; i < subscribers; i += 250)
      await Promise.all(Array.from({ length: Math.min(250, subscribers - i) }, (_, k) => open(i + k)));
    withOpen();
    changeSetAt = Date.now();
    await change();
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && changedAt.filter((t) => t !== undefined).length < connected) await sleep(20);
    const delays = changedAt
      .filter((t): t is number => t !== undefined)
      .map((t) => t - changeSetAt)
      .sort((a, b) => a - b);
    return {
      subscribers,
      connected,
      firstMs: delays[0] ?? NaN,
      medianMs: delays[Math.floor(delays.length / 2)] ?? NaN,
      lastMs: delays.at(-1) ?? NaN,
      missed: subscribers - delays.length,
    };
  } finally {
    for (const req of requests) req.destroy();
    agent.destroy();
  }
}
