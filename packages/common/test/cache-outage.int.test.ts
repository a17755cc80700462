import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { RedisCache } from '../src/cache';
import { testLogger } from './support';
import { describeNeeding } from './support/binaries';
import { CuttableProxy, freePort, ThrowawayRedis } from './support/throwaway';

const run = promisify(execFile);

describeNeeding(['redis-server'], 'Redis cache during an outage (throwaway redis-server behind a proxy)', () => {
  let redis: ThrowawayRedis;
  let proxy: CuttableProxy;
  let cache: RedisCache;

  beforeAll(async () => {
    redis = new ThrowawayRedis(await freePort());
    await redis.start();
    proxy = new CuttableProxy(redis.port);
    await proxy.start();
    cache = new RedisCache(proxy.url, 'outage:', testLogger);
    await cache.ping();
  });

  afterAll(async () => {
    await cache?.close();
    await proxy?.stop();
    await redis?.stop();
  });

  it('answers many waiting requests 503 without piling listeners (no MaxListenersExceededWarning)', async () => {
    const child = path.join(__dirname, 'support', 'cache-outage-child.ts');
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', child, String(redis.port), '50'], {
      cwd: path.join(__dirname, '..'),
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const { first, rest } = JSON.parse(stdout) as { first: string; rest: string[] };
    expect(first).toBe('service_unavailable');
    expect(rest).toEqual(Array(50).fill('service_unavailable'));
    expect(stderr).not.toMatch(/MaxListenersExceededWarning/);
  }, 30000);
});
