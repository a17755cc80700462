/**
 * What the database part of a payment request's creation costs on the embedded database (issue 44), without
 * HTTP: a PGlite of its own (in memory, in this process, through its unix socket as `pnpm start` uses it),
 * the transactions schema migrated, and PaymentRequestService as the service builds it (audit log, outbox,
 * checkout links). For each batch size B: creations given together (B at once, as concurrent requests arrive),
 * CPU ms of this process per creation; then each statement of one batch on its own (BEGIN … COMMIT, the
 * insert of the requests and their tokens, the events, the audit records), ms per statement.
 *
 *   pnpm exec tsx bench/payreq-statements.ts          # BENCH_PAYREQ_ROUNDS (200 creations per size)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  auditStore,
  AuditLog,
  createDatabase,
  createLogger,
  MemoryBus,
  migrate,
  readMigrations,
  type AuditActor,
} from '@attest/common';
import { checkoutLinks } from '../services/transactions/src/checkout-page';
import { loadTransactionsConfig } from '../services/transactions/src/config';
import { PaymentRequestService } from '../services/transactions/src/payment-requests';
import type { CreateRequest } from '../services/transactions/src/payment-requests/create-request';
import { paymentRequestStore } from '../services/transactions/src/payment-requests/payment-request-store';
import type { NewPaymentRequest } from '../services/transactions/src/payment-requests/payment-request-types';
import { writeEvent } from '../services/transactions/src/webhooks';
import { ROOT } from '../test/support';

const quiet = createLogger('bench', 'silent');
const actor: AuditActor = { type: 'app', id: 'key_bench', requestId: 'req_bench', clientAddress: '127.0.0.1' };
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function main(): Promise<void> {
  const total = Number(process.env.BENCH_PAYREQ_ROUNDS ?? 200);
  const db = await createDatabase({ schema: 'transactions', logger: quiet });
  try {
    await migrate(db, readMigrations(path.join(ROOT, 'services', 'transactions', 'migrations')));
    const config = loadTransactionsConfig({
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'attest-payreq-')),
      API_KEY_SECRET: 'bench-api-key-secret-0123456789abcdef',
      LOG_LEVEL: 'silent',
    });
    const service = new PaymentRequestService(
      db,
      { quote: () => Promise.reject(new Error('token-priced: no price asked')) },
      new MemoryBus(),
      {
        audit: new AuditLog(db, quiet, { retentionDays: 1 }),
        outbox: writeEvent,
        links: checkoutLinks(config.API_URL, config.CHAIN_TOKENS, config.CHAIN_IDS),
      },
    );
    let n = 0;
    const input = (): CreateRequest => ({
      appId: 'app_bench',
      reference: `bench-${++n}`,
      chain: 'worldchain',
      to: `0x${'2'.repeat(40)}`,
      expiresInSeconds: null,
      metadata: null,
      returnUrl: null,
      price: { tokenAmount: 1500000n },
      tokens: [{ token: 'USDCE', decimals: 6 }],
      tokensField: 'token',
    });
    // warm: each statement prepared once, the WebAssembly's code compiled
    for (let i = 0; i < 50; i++) await Promise.all([service.create(input(), actor), service.create(input(), actor)]);
    process.stdout.write('creations given together (PaymentRequestService.create, no HTTP):\n');
    for (const size of [32, 16, 4, 1, 32]) {
      const cpu = cpuMs();
      const t0 = performance.now();
      for (let done = 0; done < total; done += size)
        await Promise.all(Array.from({ length: size }, () => service.create(input(), actor)));
      const each = (x: number) => (x / (Math.ceil(total / size) * size)).toFixed(3);
      process.stdout.write(
        `  ${String(size).padStart(2)} at once: ${each(cpuMs() - cpu)} ms CPU, ${each(performance.now() - t0)} ms wall per creation\n`,
      );
    }
    process.stdout.write('each statement of one batch (CPU ms of this process per statement, median of 50):\n');
    for (const size of [1, 16, 32]) {
      const times: Record<string, number[]> = { 'BEGIN+COMMIT': [], requests: [], events: [], audit: [] };
      for (let round = 0; round < 50; round++) {
        const requests: NewPaymentRequest[] = Array.from({ length: size }, () => ({
          id: `pr_${(++n).toString(16).padStart(32, '0')}`,
          appId: 'app_bench',
          reference: `bench-${n}`,
          chain: 'worldchain',
          to: `0x${'2'.repeat(40)}`,
          expiresInSeconds: null,
          metadata: null,
          returnUrl: null,
          fiat: null,
          accepted: [{ token: 'USDCE', amountDue: '1500000', price: null }],
        }));
        const t0 = cpuMs();
        await db.transaction(async (tx) => {
          const t1 = cpuMs();
          const stored = await paymentRequestStore(tx).insertAll(requests);
          const t2 = cpuMs();
          await writeEvent(
            tx,
            ...[...stored.values()].map((r) => ({
              id: `evt_${r.id}`,
              appId: r.appId,
              type: 'payment_request.created',
              transactionId: null,
              paymentRequestId: r.id,
              body: JSON.stringify({ type: 'payment_request.created', data: { id: r.id, reference: r.reference } }),
            })),
          );
          const t3 = cpuMs();
          await auditStore(tx).insert(
            requests.map((r) => ({
              type: 'payment_request.created',
              actor,
              subject: r.id,
              detail: { reference: r.reference },
            })),
          );
          const t4 = cpuMs();
          times.requests.push(t2 - t1);
          times.events.push(t3 - t2);
          times.audit.push(t4 - t3);
        });
        // what is left of the whole: BEGIN, COMMIT, and the transaction's own bookkeeping
        const whole = cpuMs() - t0;
        times['BEGIN+COMMIT'].push(whole - times.requests[round] - times.events[round] - times.audit[round]);
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)].toFixed(3);
      process.stdout.write(
        `  ${String(size).padStart(2)} rows: ${Object.entries(times)
          .map(([k, xs]) => `${k} ${median(xs)}`)
          .join(', ')}\n`,
      );
    }
  } finally {
    await db.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
