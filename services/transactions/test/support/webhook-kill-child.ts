/**
 * Run as its own process by webhooks.int.test.ts: starts the transactions service over the given
 * database, adds a webhook endpoint, commits a new transaction (the change and its outbox row), prints
 * what it made, and kills itself with SIGKILL: nothing of the change is delivered before the restart.
 */
import { createDatabase, migrate, readMigrations, MemoryBus } from '@attest/common';
import { testLogger } from '@attest/testing';
import path from 'node:path';
import { TransactionService } from '../../src/transactions/transaction-service';
import { ADDRESS_A, ADDRESS_B, newAppId, transactionsHarness } from '../support';

async function main(): Promise<void> {
  const env = process.env;
  const db = await createDatabase({
    url: env.CHILD_DATABASE_URL || undefined,
    embeddedDir: env.CHILD_PG_DIR || undefined,
    schema: env.CHILD_SCHEMA!,
    logger: testLogger,
  });
  await migrate(db, readMigrations(path.join(__dirname, '..', '..', 'migrations')));
  const h = await transactionsHarness(
    { KEY_ENCRYPTION_KEY: env.KEY_ENCRYPTION_KEY, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_INTERVAL_MS: '60000' },
    { db },
  );
  const appId = newAppId();
  const hook = await h.admin('post', `/apps/${appId}/webhooks`).send({ url: env.RECEIVER_URL });
  if (hook.status !== 201) throw new Error(`webhook add: ${hook.status}`);
  // The service's worker is stopped first (close() waits for a pass in flight, and leaves the database open):
  // a pass running beside the commit below would lease the delivery for a minute before the kill, and the
  // restarted service could send it only after that lease (a slow machine showed it). Then the change is
  // written as the admin API writes it, and the process dies before anything could deliver it.
  await h.close();
  const service = new TransactionService(db, new MemoryBus());
  const t = await service.record(
    {
      appId,
      type: 'pay',
      reference: 'killed-order',
      transactionHash: null,
      status: 'pending',
      from: ADDRESS_A,
      to: ADDRESS_B,
      chain: 'worldchain',
      token: 'USDCE',
      tokenAmount: '1500000',
    },
    'admin',
  );
  process.stdout.write(
    `${JSON.stringify({ app_id: appId, webhook_id: hook.body.webhook_id, secret: hook.body.secret, transaction_id: t.id })}\n`,
  );
  process.kill(process.pid, 'SIGKILL');
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
