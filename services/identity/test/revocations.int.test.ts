import request from 'supertest';
import { createBus, RedisCache } from '@attest/common';
import { testLogger } from '@attest/testing';
import { freePort, ThrowawayRedis } from '../../../packages/common/test/support/throwaway';
import {
  basic,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

/**
 * Issue #9 defect 4: revocations and the used codes that drive them survive the loss of the cache.
 * Embedded mode loses its cache with the process: a fresh instance over the same database stands for
 * the restart. Real mode: a throwaway redis-server restarts empty under a running instance, and a
 * fresh instance is started over the same database and the same (now empty) Redis.
 */
const real = Boolean(process.env.TEST_REDIS_URL);

/** Polls until the value has active: false, for at most a second; returns the last value. */
async function withinASecond(read: () => Promise<{ active: boolean }>): Promise<{ active: boolean }> {
  const deadline = Date.now() + 1000;
  let value = await read();
  while (value.active !== false && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    value = await read();
  }
  return value;
}

describe('revocations survive the loss of the cache (#9 defect 4)', () => {
  let redis: ThrowawayRedis | undefined;
  const opened: IdentityHarness[] = [];
  let first: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let user: { username: string; password: string };

  async function instance(over?: IdentityHarness): Promise<IdentityHarness> {
    const shared = redis
      ? {
          db: over?.storage.db,
          cache: new RedisCache(redis.url, 'attest:identity:', testLogger),
          bus: createBus(redis.url, 'attest:identity:', testLogger),
        }
      : { db: over?.storage.db };
    const h = await identityHarness({}, shared);
    opened.push(h);
    return h;
  }

  /** The instances to ask after the cache is lost: the running one when its Redis restarted empty, and a fresh one. */
  async function loseCache(h: IdentityHarness): Promise<IdentityHarness[]> {
    if (!redis) return [await instance(h)];
    await redis.stop();
    await redis.start();
    for (
      let i = 0;
      i < 100 &&
      !(await h.storage.cache.ping().then(
        () => h.storage.bus.connected,
        () => false,
      ));
      i++
    ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    return [h, await instance(h)];
  }

  beforeAll(async () => {
    if (real) {
      redis = new ThrowawayRedis(await freePort());
      await redis.start();
    }
    first = await instance();
    app = await createApp(first);
    user = await createUser(first);
  });
  afterAll(async () => {
    for (const h of opened.reverse()) await h.close();
    await redis?.stop();
  });

  async function code(h: IdentityHarness): Promise<string> {
    const res = await browserFlow(
      request.agent(h.publicApp),
      { response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI },
      user,
    );
    return callbackParams(res).code;
  }
  const exchange = (h: IdentityHarness, c: string) =>
    request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT_URI });
  const introspect = (h: IdentityHarness, token: string) =>
    request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ token });
  const userinfo = (h: IdentityHarness, token: string) =>
    request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${token}`);

  it('a token revoked by a replayed code stays revoked after the cache is lost', async () => {
    const c = await code(first);
    const issued = await exchange(first, c);
    expect(issued.status).toBe(200);
    expect((await exchange(first, c)).body.code).toBe('invalid_grant');
    expect((await introspect(first, issued.body.access_token)).body).toEqual({ active: false });

    for (const h of await loseCache(first)) {
      expect((await introspect(h, issued.body.access_token)).body).toEqual({ active: false });
      const info = await userinfo(h, issued.body.access_token);
      expect(info.status).toBe(401);
      expect(info.body.code).toBe('invalid_token');
    }
    const [row] = await first.storage.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM revoked_tokens WHERE expires_at > now()',
    );
    expect(row.n).toBeGreaterThanOrEqual(1);
  });

  it('a code used before the cache was lost still revokes its tokens when replayed after', async () => {
    const c = await code(first);
    const issued = await exchange(first, c);
    expect(issued.status).toBe(200);
    const token = issued.body.access_token as string;
    expect((await introspect(first, token)).body.active).toBe(true);

    const after = await loseCache(first);
    const h = after[after.length - 1];
    expect((await introspect(h, token)).body.active).toBe(true);
    const replay = await exchange(h, c);
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('invalid_grant');
    // the instance that replayed knows at once; another replica learns through the bus within a second
    expect((await introspect(h, token)).body).toEqual({ active: false });
    for (const each of after)
      expect(await withinASecond(async () => (await introspect(each, token)).body)).toEqual({ active: false });
    expect((await userinfo(h, token)).status).toBe(401);
  });

  it('records the codes of concurrent exchanges in few statements, each caller settling with its own row', async () => {
    const { revocations } = first.ctx.tokens;
    const store = (revocations as unknown as { store: { recordUsedCodes: (codes: unknown[]) => Promise<void> } }).store;
    const original = store.recordUsedCodes.bind(store);
    const batches: number[] = [];
    store.recordUsedCodes = async (codes) => {
      batches.push(codes.length);
      return original(codes);
    };
    try {
      const expiresAt = new Date(Date.now() + 3600_000);
      const hashes = Array.from({ length: 40 }, (_, i) => `group-commit-${Date.now()}-${i}`);
      await Promise.all(
        hashes.map((hash, i) => revocations.recordUsedCode(hash, { jtis: [`jti-a-${i}`, `jti-b-${i}`], expiresAt })),
      );
      expect(batches.reduce((a, b) => a + b, 0)).toBe(40);
      expect(batches.length).toBeLessThan(40);
      for (const [i, hash] of hashes.entries()) {
        const used = await revocations.usedCode(hash);
        expect(used?.jtis).toEqual([`jti-a-${i}`, `jti-b-${i}`]);
        expect(used?.expiresAt.getTime()).toBe(expiresAt.getTime());
      }

      // a failed write fails every exchange whose row it carried, and the next write goes on
      batches.length = 0;
      let fail = true;
      store.recordUsedCodes = async (codes) => {
        batches.push(codes.length);
        if (fail) throw new Error('database unavailable');
        return original(codes);
      };
      const failing = await Promise.allSettled(
        [1, 2, 3].map((i) =>
          revocations.recordUsedCode(`group-fail-${Date.now()}-${i}`, { jtis: [`x-${i}`], expiresAt }),
        ),
      );
      expect(failing.every((r) => r.status === 'rejected')).toBe(true);
      fail = false;
      const after = `group-after-${Date.now()}`;
      await revocations.recordUsedCode(after, { jtis: ['y'], expiresAt });
      expect((await revocations.usedCode(after))?.jtis).toEqual(['y']);
    } finally {
      store.recordUsedCodes = original;
    }
  });
});
