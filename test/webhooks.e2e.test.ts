import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../packages/common/test/support/throwaway';
import { manage, ROOT, stackEnv, startStack, type Stack } from './support';

type Json = Record<string, unknown>;

/** The receiver of docs/payments.md, exactly as written there. */
function docsReceiver(): string {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'payments.md'), 'utf8');
  const code = /### A receiver[\s\S]*?```js\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!code) throw new Error('docs/payments.md has no receiver example');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attest-receiver-')), 'receiver.js');
  fs.writeFileSync(file, code);
  return file;
}

async function until<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 30000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** pnpm start + pnpm manage webhook … + the receiver example of docs/payments.md. */
describe('webhooks with pnpm start and the documented receiver', () => {
  let stack: Stack | undefined;
  let receiver: ChildProcess | undefined;

  afterAll(async () => {
    receiver?.kill('SIGTERM');
    await stack?.stop();
  });

  it('delivers signed events the example verifies, deduplicates and re-reads; the CLI manages endpoints and deliveries', async () => {
    const env = await stackEnv({ WEBHOOK_RETRY_SCHEDULE: '0,0,1' });
    stack = await startStack(env, 150000);
    const run = async (...args: string[]) => {
      const result = await manage(args, env);
      if (result.code !== 0) throw new Error(`manage ${args.join(' ')} failed: ${result.stderr}`);
      return JSON.parse(result.stdout) as Json & Json[];
    };
    const app = await run('app', 'create', '--name', 'Shop', '--redirect-uri', 'http://localhost:3000/callback');
    const port = await freePort();
    const hook = await run(
      'webhook',
      'add',
      '--app-id',
      String(app.app_id),
      '--url',
      `http://127.0.0.1:${port}/webhooks/attest`,
    );
    expect(hook).toMatchObject({
      webhook_id: expect.stringMatching(/^wh_/),
      url: `http://127.0.0.1:${port}/webhooks/attest`,
      secret: expect.stringMatching(/^whsec_/),
    });

    let output = '';
    receiver = spawn(process.execPath, [docsReceiver()], {
      env: {
        PATH: process.env.PATH,
        NODE_PATH: [path.join(ROOT, 'services', 'transactions', 'node_modules'), path.join(ROOT, 'node_modules')].join(
          path.delimiter,
        ),
        WEBHOOK_SECRET: String(hook.secret),
        API_URL: stack.urls.transactions,
        API_KEY: String(app.api_key),
        PORT: String(port),
      },
    });
    receiver.stdout!.on('data', (d) => (output += d));
    receiver.stderr!.on('data', (d) => (output += d));
    await until(() => (output.includes(`listening on ${port}`) ? true : undefined));

    const tx = await run(
      'transaction',
      'record',
      '--app-id',
      String(app.app_id),
      '--type',
      'pay',
      '--reference',
      'order-7',
      '--from',
      `0x${'1'.repeat(40)}`,
      '--to',
      `0x${'2'.repeat(40)}`,
      '--chain',
      'worldchain',
      '--token',
      'USDCE',
      '--token-amount',
      '1500000',
    );
    await run('transaction', 'set-status', String(tx.transaction_id), 'mined');
    await until(() => (output.includes('ship order-7') ? true : undefined));

    const settled = async (count: number) =>
      until(async () => {
        const list = (await run('webhook', 'deliveries', String(hook.webhook_id))) as unknown as Json[];
        return list.length === count && list.every((d) => d.status === 'succeeded') ? list : undefined;
      });
    const deliveries = await settled(2);
    expect(deliveries.map((d) => d.event_type).sort()).toEqual(['transaction.created', 'transaction.mined']);
    expect(deliveries[0].log).toEqual([expect.objectContaining({ attempt: 1, status_code: 204 })]);

    // a redelivery has the same webhook-id: the receiver answers without shipping twice
    const mined = deliveries.find((d) => d.event_type === 'transaction.mined')!;
    const again = await run('webhook', 'redeliver', String(mined.delivery_id));
    expect(again).toMatchObject({ event_id: mined.event_id, status: 'pending' });
    await settled(3);
    const replay = await run(
      'webhook',
      'replay',
      '--app-id',
      String(app.app_id),
      '--since',
      new Date(Date.now() - 3600000).toISOString(),
    );
    expect(replay).toMatchObject({ deliveries: 2, events: 2 });
    await settled(5);
    expect(output.match(/ship order-7/g)).toHaveLength(1);

    const rotated = await run('webhook', 'rotate-secret', String(hook.webhook_id));
    expect(rotated.secret).not.toBe(hook.secret);
    expect((await run('webhook', 'list', '--app-id', String(app.app_id))).map((e) => e.webhook_id)).toEqual([
      hook.webhook_id,
    ]);
    expect(await run('webhook', 'remove', String(hook.webhook_id))).toMatchObject({
      webhook_id: hook.webhook_id,
      removed: true,
    });
    expect(await run('webhook', 'list', '--app-id', String(app.app_id))).toEqual([]);

    const bad = await manage(
      ['webhook', 'add', '--app-id', String(app.app_id), '--url', 'http://shop.example/hooks'],
      env,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('url must be https');
    const usage = await manage(['webhook', 'replay', '--app-id', String(app.app_id)], env);
    expect(usage.stderr).toContain('Missing --since');
  }, 300000);
});
