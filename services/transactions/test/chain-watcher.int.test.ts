import ganache from 'ganache';
import { createWalletClient, http, type Hash, type PublicClient } from 'viem';
import { testLogger } from '@attest/testing';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { ChainWatcher } from '../src/chain/chain-watcher';
import { chainClient } from '../src/chain/start-watcher';
import { TransactionService } from '../src/domain/transactions';
import { transactionStore } from '../src/store/transaction-store';
import { newAppId, recordTransaction, transactionsHarness, type TransactionsHarness } from './support';

// Runtime code that always reverts (PUSH1 0 PUSH1 0 REVERT), wrapped in init code that returns it.
const REVERTING_CONTRACT = '0x6460006000fd6000526005601bf3';

describe('chain watcher against a local EVM node (ganache)', () => {
  let h: TransactionsHarness;
  let server: ReturnType<typeof ganache.server>;
  let rpcUrl: string;
  let client: PublicClient;
  let wallet: ReturnType<typeof createWalletClient>;
  let accounts: `0x${string}`[];
  const appId = newAppId();

  beforeAll(async () => {
    h = await transactionsHarness();
    const port = await freePort();
    // ganache's bundled typings resolve ServerOptions to undefined under TS 5.9; the options are its documented ones.
    const options = { logging: { quiet: true }, wallet: { deterministic: true, totalAccounts: 3 }, chain: { chainId: 1337 } };
    server = ganache.server(options as unknown as Parameters<typeof ganache.server>[0]);
    await server.listen(port, '127.0.0.1');
    rpcUrl = `http://127.0.0.1:${port}`;
    client = chainClient(rpcUrl);
    wallet = createWalletClient({ transport: http(rpcUrl) });
    accounts = await wallet.getAddresses();
  }, 60000);
  afterAll(async () => {
    await h.close();
    await server.close();
  });

  const watcher = (options: Partial<ConstructorParameters<typeof ChainWatcher>[3]> = {}) =>
    new ChainWatcher(client, transactionStore(h.storage.db), new TransactionService(h.storage.db, h.storage.bus), { chain: 'worldchain', confirmations: 1, dropTimeoutMs: 60000, intervalMs: 50, ...options }, testLogger);

  const send = (request: { to?: `0x${string}`; value?: bigint; data?: `0x${string}`; gas?: bigint }) =>
    wallet.sendTransaction({ account: accounts[0], chain: null, ...request } as Parameters<typeof wallet.sendTransaction>[0]);

  const status = async (id: string) => (await h.admin('get', `/transactions/${id}`)).body;

  it('moves a transaction that succeeded on chain to mined, only after the configured confirmations', async () => {
    const hash = await send({ to: accounts[1], value: 1000n });
    const t = await recordTransaction(h, appId, { from: accounts[0], to: accounts[1], transaction_hash: hash });
    const w = watcher({ confirmations: 2 });
    expect(await w.tick()).toEqual({ [t.transaction_id]: 'waiting' });
    expect((await status(t.transaction_id)).transaction_status).toBe('pending');
    await client.request({ method: 'evm_mine' as 'eth_blockNumber' });
    expect(await w.tick()).toEqual({ [t.transaction_id]: 'mined' });
    const detail = await status(t.transaction_id);
    expect(detail.transaction_status).toBe('mined');
    expect(detail.history.at(-1)).toMatchObject({ from_status: 'pending', to_status: 'mined', source: expect.stringMatching(/^chain:success@\d+$/) });
  });

  it('moves a reverted transaction to failed', async () => {
    const deployHash = await send({ data: REVERTING_CONTRACT, gas: 200000n });
    const { contractAddress } = await client.getTransactionReceipt({ hash: deployHash });
    const hash = await send({ to: contractAddress!, gas: 100000n });
    expect((await client.getTransactionReceipt({ hash })).status).toBe('reverted');
    const t = await recordTransaction(h, appId, { type: 'sendTransaction', from: accounts[0], to: contractAddress!, transaction_hash: hash });
    expect(await watcher().tick()).toEqual({ [t.transaction_id]: 'failed' });
    expect((await status(t.transaction_id)).history.at(-1).source).toMatch(/^chain:reverted@/);
  });

  it('fails a transaction the chain never saw, after the drop timeout', async () => {
    const hash = `0x${'ab'.repeat(32)}` as Hash;
    const t = await recordTransaction(h, appId, { transaction_hash: hash });
    expect(await watcher({ dropTimeoutMs: 60000 }).tick()).toEqual({ [t.transaction_id]: 'waiting' });
    expect(await watcher({ dropTimeoutMs: 0 }).tick()).toEqual({ [t.transaction_id]: 'dropped' });
    expect((await status(t.transaction_id)).transaction_status).toBe('failed');
  });

  it('ignores other chains and transactions without a hash; replicas never process one twice', async () => {
    const other = await recordTransaction(h, appId, { chain: 'ethereum', transaction_hash: `0x${'cd'.repeat(32)}` });
    await recordTransaction(h, appId);
    const hash = await send({ to: accounts[2], value: 1n });
    const t = await recordTransaction(h, appId, { transaction_hash: hash });
    const replicas = [watcher(), watcher(), watcher()];
    const results = await Promise.all(replicas.map((w) => w.tick()));
    const merged = results.flatMap((r) => Object.entries(r));
    expect(merged.filter(([id]) => id === t.transaction_id)).toEqual([[t.transaction_id, 'mined']]);
    expect(merged.find(([id]) => id === other.transaction_id)).toBeUndefined();
    expect((await status(t.transaction_id)).history.filter((x: { to_status: string }) => x.to_status === 'mined')).toHaveLength(1);
  });

  it('runs inside the service when CHAIN_RPC_URL is set', async () => {
    const service = await transactionsHarness({ CHAIN_RPC_URL: rpcUrl, CHAIN_POLL_INTERVAL_MS: '100' });
    try {
      const hash = await send({ to: accounts[1], value: 5n });
      const t = await recordTransaction(service, newAppId(), { transaction_hash: hash });
      const deadline = Date.now() + 10000;
      let current = 'pending';
      while (current === 'pending' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        current = (await service.admin('get', `/transactions/${t.transaction_id}`)).body.transaction_status;
      }
      expect(current).toBe('mined');
    } finally {
      await service.close();
    }
  }, 20000);
});
