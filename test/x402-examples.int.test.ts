import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { encrypt } from '@attest/common';
import { freePort } from '../packages/common/test/support';
import { ReceivingAddressService, signatureVerifier } from '../services/transactions/src/receiving-addresses';
import {
  apiKeyFor,
  newAppId,
  transactionsHarness,
  type TransactionsHarness,
} from '../services/transactions/test/support';
import { localChain, type LocalChain } from '../services/transactions/test/support/local-chain';
import {
  deployX402Token,
  newKey,
  TOKEN_NAME,
  TOKEN_VERSION,
  type X402Chain,
} from '../services/transactions/test/support/x402';
import { ROOT } from './support';

const KEY_ENCRYPTION_KEY = 'x402-examples-key-encryption-key-0123456789';

/** An example run as examples/README.md says (`node examples/…`): its exit code and output. */
function runExample(script: string, env: NodeJS.ProcessEnv, args: string[] = []) {
  const child = spawn(process.execPath, [path.join(ROOT, 'examples', script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, output: () => output, exited };
}

/**
 * Issue 43: examples/x402-seller (an @x402/express route, Attest its facilitator) and examples/x402-buyer
 * (@x402/fetch with a local wallet), against the transactions service on a local chain.
 */
describe('examples/x402-seller and examples/x402-buyer (ganache)', () => {
  let chain: LocalChain;
  let x402: X402Chain;
  let h: TransactionsHarness;
  let server: http.Server;
  const relayer = newKey();

  beforeAll(async () => {
    chain = await localChain();
    x402 = await deployX402Token(chain);
    await x402.fund(relayer.address, 10n ** 18n);
    h = await transactionsHarness({
      CHAIN_RPC_URL: chain.url,
      CHAIN_TOKENS: JSON.stringify({ worldchain: { USDC: { address: x402.token, decimals: 6 } } }),
      CHAIN_FINALITY: '1',
      KEY_ENCRYPTION_KEY,
      X402_RELAYER_KEY: encrypt(KEY_ENCRYPTION_KEY, relayer.key),
    });
    server = http.createServer(h.publicApp);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }, 120000);
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await h?.close();
    await chain?.close();
  });

  it('the buyer pays the seller’s route through Attest and gets the report', async () => {
    const appId = newAppId();
    const apiKey = (await apiKeyFor(h, appId)).api_key;
    const seller = newKey().address;
    await new ReceivingAddressService(h.storage.db, signatureVerifier({})).addByOperator(appId, 'worldchain', seller, {
      type: 'operator',
      id: 'test',
    });
    const buyer = newKey();
    await x402.mint(buyer.address, 50_000n);
    const port = await freePort();
    const shop = runExample('x402-seller/server.mjs', {
      API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      API_KEY: apiKey,
      PAY_TO: seller,
      ASSET: x402.token,
      TOKEN_NAME,
      TOKEN_VERSION,
      PORT: String(port),
    });
    try {
      for (let i = 0; i < 300 && !shop.output().includes('listening'); i++) {
        if (shop.child.exitCode !== null) throw new Error(`seller exited: ${shop.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(shop.output()).toContain('eip155:1337');
      const paid = runExample('x402-buyer/pay.mjs', { BUYER_KEY: buyer.key, ASSET: x402.token }, [
        `http://127.0.0.1:${port}/report`,
      ]);
      expect(await paid.exited).toBe(0);
      const out = JSON.parse(paid.output().trim().split('\n').pop()!) as {
        resource: { report: string };
        payment: { success: boolean; transaction: string; payer: string };
      };
      expect(out.resource.report).toContain('Paid for with x402');
      expect(out.payment).toMatchObject({ success: true, payer: buyer.address });
      expect(await x402.balanceOf(seller)).toBe(10_000n);
      expect(await x402.balanceOf(buyer.address)).toBe(40_000n);
    } finally {
      shop.child.kill();
      await shop.exited;
    }
  });
});
