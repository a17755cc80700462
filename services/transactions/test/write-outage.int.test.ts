import request from 'supertest';
import { pendingInvalidations } from '@attest/common';
import {
  cuttableRedis,
  describeNeeding,
  once503sEnd,
  until,
  type CuttableProxy,
  type ThrowawayRedis,
} from '@attest/testing';
import { apiKeyFor, newAppId, recordTransaction, transactionsHarness, type TransactionsHarness } from './support';

describeNeeding(
  ['redis-server'],
  'admin writes while Redis is unreachable (throwaway redis-server behind a proxy)',
  () => {
    let redis: ThrowawayRedis;
    let proxy: CuttableProxy;
    let h: TransactionsHarness;
    const appId = newAppId();

    beforeAll(async () => {
      ({ redis, proxy } = await cuttableRedis());
      h = await transactionsHarness({ API_KEY_CACHE_SECONDS: '60' }, { redis: proxy.url });
    }, 90000);

    afterAll(async () => {
      await h?.close();
      await proxy?.stop();
      await redis?.stop();
    });

    afterEach(() => proxy.heal());

    const lookup = (id: string, apiKey: string) =>
      request(h.publicApp)
        .get(`/api/v2/client/transaction/${id}`)
        .query({ app_id: appId, type: 'pay' })
        .set('Authorization', `Bearer ${apiKey}`);
    const history = (id: string) =>
      h.storage.db.query<{ from_status: string | null; to_status: string }>(
        'SELECT from_status, to_status FROM transaction_status_history WHERE transaction_id = $1 ORDER BY id',
        [id],
      );

    it('reports a committed status change as a success; a retry succeeds and changes nothing', async () => {
      const key = await apiKeyFor(h, appId);
      const tx = await recordTransaction(h, appId);
      expect((await lookup(tx.transaction_id, key.api_key)).body.transaction_status).toBe('pending');

      proxy.cut();
      const first = await h.admin('post', `/transactions/${tx.transaction_id}/status`).send({ status: 'mined' });
      expect({ status: first.status, body: first.body }).toEqual({
        status: 200,
        body: expect.objectContaining({ transaction_id: tx.transaction_id, transaction_status: 'mined' }),
      });
      const retry = await h.admin('post', `/transactions/${tx.transaction_id}/status`).send({ status: 'mined' });
      expect(retry.status).toBe(200);
      expect(retry.body.transaction_status).toBe('mined');
      expect(await history(tx.transaction_id)).toEqual([
        { from_status: null, to_status: 'pending' },
        { from_status: 'pending', to_status: 'mined' },
      ]);

      proxy.heal();
      await until(() => pendingInvalidations(h.storage.cache) === 0);
      const after = await once503sEnd(() => lookup(tx.transaction_id, key.api_key));
      expect(after.status).toBe(200);
      expect(after.body.transaction_status).toBe('mined');
    }, 30000);

    it('reports a committed key revocation as a success; the cached key stops working once Redis is back', async () => {
      const key = await apiKeyFor(h, appId);
      const tx = await recordTransaction(h, appId);
      expect((await lookup(tx.transaction_id, key.api_key)).status).toBe(200);

      proxy.cut();
      const revoked = await h.admin('post', `/api-keys/${key.key_id}/revoke`);
      expect(revoked.status).toBe(200);
      expect(revoked.body).toEqual(expect.objectContaining({ key_id: key.key_id, revoked_at: expect.any(String) }));
      const [row] = await h.storage.db.query<{ revoked: boolean }>(
        'SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE id = $1',
        [key.key_id],
      );
      expect(row.revoked).toBe(true);

      proxy.heal();
      await until(() => pendingInvalidations(h.storage.cache) === 0);
      const after = await once503sEnd(() => lookup(tx.transaction_id, key.api_key));
      expect(after.status).toBe(401);
    }, 30000);

    it('stays ready and serving while Redis is unreachable: keys and lookups come from memory and Postgres', async () => {
      const key = await apiKeyFor(h, appId);
      const tx = await recordTransaction(h, appId);
      expect((await request(h.publicApp).get('/readyz')).body).toEqual({
        status: 'ready',
        checks: { database: 'ok', cache: 'ok' },
      });
      proxy.cut();
      const ready = await request(h.publicApp).get('/readyz');
      expect({ status: ready.status, body: ready.body }).toEqual({
        status: 200,
        body: { status: 'ready', checks: { database: 'ok', cache: 'unavailable' } },
      });
      const looked = await lookup(tx.transaction_id, key.api_key);
      expect({ status: looked.status, reference: looked.body.reference }).toEqual({
        status: 200,
        reference: tx.reference,
      });
      proxy.heal();
    }, 30000);
  },
);
