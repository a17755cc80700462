/**
 * Run as its own process by cache-outage.int.test.ts, so Node's process warnings reach stderr (inside
 * Jest they go to the runner's process, not the test's): connects a RedisCache through a proxy to the
 * redis-server on the given port, cuts the proxy, lets many requests wait, and prints their error codes.
 */
import { RedisCache } from '../../src/cache';
import { createLogger } from '../../src/logger';
import { CuttableProxy } from './throwaway';

async function main(redisPort: number, requests: number): Promise<void> {
  const proxy = new CuttableProxy(redisPort);
  await proxy.start();
  const cache = new RedisCache(proxy.url, 'outage-child:', createLogger('child', 'silent'));
  await cache.ping();
  proxy.cut();
  const codeOf = (err: unknown) => (err as { code?: string }).code ?? 'none';
  const first = await cache.get('first').then(() => 'fulfilled', codeOf);
  const waiting = Array.from({ length: requests }, (_, i) => cache.get(`k${i}`).then(() => 'fulfilled', codeOf));
  const rest = await Promise.all(waiting);
  await new Promise((r) => setImmediate(r));
  process.stdout.write(`${JSON.stringify({ first, rest })}\n`);
  await cache.close();
  await proxy.stop();
}

main(Number(process.argv[2]), Number(process.argv[3])).then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  },
);
