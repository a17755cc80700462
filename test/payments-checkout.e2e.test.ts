import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describeNeeding } from '../packages/common/test/support';
import { manage, ROOT, stackEnv, startStack, type Stack } from './support';
import { markedBlock } from './readme-blocks';

/**
 * docs/payments.md's checkout walk-through, the merchant's commands run as written (the blocks marked
 * `<!-- checkout: … -->`) against `pnpm start`'s program: create the request priced in USD, record the
 * wallet's payment naming it, read it. `pnpm start` has no chain watcher: the test marks the payment mined
 * with the operator's command where a chain would.
 */
type Json = Record<string, unknown>;
const DOC = fs.readFileSync(path.join(ROOT, 'docs', 'payments.md'), 'utf8');

/** `bash -euo pipefail -c script` in the repository root: its exit code and stdout (stderr on failure). */
function bash(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The JSON documents a block printed (jq's pretty output), one after the other. */
async function documents(text: string, env: NodeJS.ProcessEnv): Promise<Json[]> {
  const slurped = await bash(`jq -cs . <<'EOF'\n${text}\nEOF`, env);
  if (slurped.code !== 0) throw new Error(`not a series of JSON documents: ${text}`);
  return JSON.parse(slurped.stdout) as Json[];
}

describeNeeding(['bash', 'curl', 'jq'], 'docs/payments.md checkout walk-through against pnpm start', () => {
  let stack: Stack;
  beforeAll(async () => {
    // the demo seed feed runs once, at start: a later run would stamp its prices newer than the
    // price this test sets by hand, which is served only until a newer quote arrives
    stack = await startStack(await stackEnv({ PRICE_FEED_INTERVAL_SECONDS: '86400' }), 400000);
  }, 500000);
  afterAll(() => stack?.stop(), 60000);

  const run = async (...args: string[]) => {
    const result = await manage(args, stack.env);
    if (result.code !== 0) throw new Error(`manage ${args.join(' ')} failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as Json;
  };

  it('creates a request priced in USD, records the payment naming it, reads it paid once the payment is mined', async () => {
    // a fresh WLD/USD price (2.50), an app and its key, as the README walk-through makes them
    await run('price', 'set', '--token', 'WLD', '--fiat', 'USD', '--amount', '2.5');
    const app = await run('app', 'create', '--name', 'Checkout', '--redirect-uri', 'http://localhost:3000/callback');
    const env = {
      ...stack.env,
      API: stack.urls.transactions,
      API_KEY: app.api_key as string,
      APP: app.app_id as string,
      SHOP: `0x${crypto.randomBytes(20).toString('hex')}`,
      CUSTOMER: `0x${crypto.randomBytes(20).toString('hex')}`,
      TX_HASH: `0x${crypto.randomBytes(32).toString('hex')}`,
    };
    // the address, create and record blocks, in one shell (the second uses what the first set); then what they left
    const made = await bash(
      `${markedBlock(DOC, 'checkout: address')}\n${markedBlock(DOC, 'checkout: create')}\n${markedBlock(DOC, 'checkout: record')}\necho "{\\"request_id\\":\\"$REQUEST_ID\\"}"`,
      env,
    );
    if (made.code !== 0) throw new Error(`the blocks failed (exit ${made.code}):\n${made.stderr}`);
    const [address, request, payment, left] = await documents(made.stdout, env);
    // the shop's address is the app's receiving address first (issue 40, item 1): an operator added it
    expect(address).toMatchObject({ app_id: env.APP, chain: 'worldchain', address: env.SHOP, proof: 'operator' });
    expect(request).toMatchObject({
      status: 'pending',
      token: 'WLD',
      to: env.SHOP,
      amount_due: '5000000',
      amount_paid: '0',
      price: { amount: '12.50', currency: 'USD', rate: { amount: '2500000', decimals: 6 } },
      metadata: { cart: 'c_77' },
      payments: [],
    });
    expect(left).toEqual({ request_id: request.id });
    expect(payment).toMatchObject({
      transaction_status: 'pending',
      reference: 'order-1042-payment-1',
      token_amount: '5000000',
    });

    // the chain's part, done by the operator's command here
    await run('transaction', 'set-status', payment.transaction_id as string, 'mined');

    const read = await bash(markedBlock(DOC, 'checkout: read'), { ...env, REQUEST_ID: request.id as string });
    if (read.code !== 0) throw new Error(`the read block failed (exit ${read.code}):\n${read.stderr}`);
    expect(await documents(read.stdout, env)).toEqual([
      {
        status: 'paid',
        reason: null,
        amount_due: '5000000',
        amount_paid: '5000000',
        amount_remaining: '0',
        payments: [{ status: 'mined', amount_received: '5000000' }],
      },
    ]);
  }, 120000);
});
