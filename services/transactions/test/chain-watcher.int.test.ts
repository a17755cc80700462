import ganache from 'ganache';
import { createWalletClient, encodeFunctionData, getAddress, http, type Hash, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import path from 'node:path';
import { migrate, readMigrations } from '@attest/common';
import { testDatabase, testLogger } from '@attest/testing';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { ChainWatcher, type ChainWatcherOptions } from '../src/chain/chain-watcher';
import { ChainMetrics } from '../src/chain/chain-metrics';
import type { RpcPool } from '../src/chain/rpc-pool';
import { chainClient, rpcPool } from '../src/chain/start-watcher';
import { newTransactionId } from '../src/transactions/transaction-rules';
import { TransactionService } from '../src/transactions/transaction-service';
import { transactionStore } from '../src/transactions/transaction-store';
import { TEST_TOKEN_ABI, TEST_TOKEN_BYTECODE } from './fixtures/test-token';
import {
  apiKeyFor,
  lookupTransaction,
  newAppId,
  postTransaction,
  receiveAt,
  recordTransaction,
  transactionsHarness,
  type TransactionsHarness,
} from './support';

type Address = `0x${string}`;

// ganache's deterministic wallet (mnemonic "myth like bonus scare over problem client lizard pioneer submit
// female collect"), account 0: to sign a transaction here and send the same bytes again after a reorganisation.
const ACCOUNT_0_KEY = '0x4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d';

const units = (amount: string, decimals: number) => (BigInt(amount) * 10n ** BigInt(decimals)) / 10n ** 6n;

describe('chain watcher against a local EVM node (ganache), payments recorded through the app API', () => {
  let h: TransactionsHarness;
  let server: ReturnType<typeof ganache.server>;
  let rpcUrl: string;
  let client: PublicClient;
  let pool: RpcPool;
  let wallet: ReturnType<typeof createWalletClient>;
  let accounts: Address[];
  let wld: Address; // an 18-decimal ERC-20, configured as WLD
  let usdce: Address; // a 6-decimal ERC-20, configured as USDCE
  let chainTokens: string;
  const appId = newAppId();
  let apiKey: string;

  const rpc = (method: string, params: unknown[] = []) =>
    client.request({ method: method as 'eth_blockNumber', params: params as never });

  const send = (request: { to?: Address; value?: bigint; data?: Address; gas?: bigint }) =>
    wallet.sendTransaction({ account: accounts[0], chain: null, ...request } as Parameters<
      typeof wallet.sendTransaction
    >[0]);

  // ganache gives eth_sendTransaction 90,000 gas unless told; explicit gas also keeps a reverting call from being refused at estimation
  const transfer = async (token: Address, to: Address, value: bigint, from?: Address) =>
    wallet.writeContract({
      address: token,
      abi: TEST_TOKEN_ABI,
      functionName: 'transfer',
      args: [to, value],
      account: from ?? accounts[0],
      chain: null,
      gas: 100000n,
    });

  async function deployToken(decimals: number): Promise<Address> {
    const hash = await wallet.deployContract({
      abi: TEST_TOKEN_ABI,
      bytecode: TEST_TOKEN_BYTECODE,
      args: [decimals],
      account: accounts[0],
      chain: null,
      gas: 1000000n,
    });
    const { contractAddress } = await client.getTransactionReceipt({ hash });
    await wallet.writeContract({
      address: contractAddress!,
      abi: TEST_TOKEN_ABI,
      functionName: 'mint',
      args: [accounts[0], 10n ** 30n],
      account: accounts[0],
      chain: null,
      gas: 100000n,
    });
    return contractAddress!;
  }

  beforeAll(async () => {
    const port = await freePort();
    // ganache's bundled typings resolve ServerOptions to undefined under TS 5.9; the options are its documented ones.
    const options = {
      logging: { quiet: true },
      wallet: { deterministic: true, totalAccounts: 4 },
      chain: { chainId: 1337 },
    };
    server = ganache.server(options as unknown as Parameters<typeof ganache.server>[0]);
    await server.listen(port, '127.0.0.1');
    rpcUrl = `http://127.0.0.1:${port}`;
    client = chainClient(rpcUrl);
    pool = rpcPool([rpcUrl], { chain: 'worldchain', quorum: 1 }, new ChainMetrics(), testLogger);
    wallet = createWalletClient({ transport: http(rpcUrl) });
    accounts = await wallet.getAddresses();
    expect(privateKeyToAccount(ACCOUNT_0_KEY).address.toLowerCase()).toBe(accounts[0].toLowerCase());
    wld = await deployToken(18);
    usdce = await deployToken(6);
    chainTokens = JSON.stringify({
      worldchain: {
        WLD: { address: wld, decimals: 18 },
        USDCE: { address: usdce, decimals: 6 },
        ETH: { native: true },
      },
    });
    h = await transactionsHarness({ CHAIN_TOKENS: chainTokens });
    apiKey = (await apiKeyFor(h, appId)).api_key;
  }, 60000);
  afterAll(async () => {
    await h.close();
    await server.close();
  });

  const watcher = (options: Partial<ChainWatcherOptions> = {}) =>
    new ChainWatcher(
      pool,
      transactionStore(h.storage.db),
      new TransactionService(h.storage.db, h.storage.bus),
      {
        chain: 'worldchain',
        tokens: h.config.CHAIN_TOKENS.worldchain,
        finality: 1,
        dropTimeoutMs: 60000,
        intervalMs: 50,
        ...options,
      },
      testLogger,
    );

  let orders = 0;
  /** Records a payment as the app would: POST with its API key; returns the transaction id. */
  async function record(
    hash: Hash,
    fields: { token: string; to: Address; token_amount: string; from?: Address; type?: string },
  ): Promise<string> {
    await receiveAt(h, appId, fields.to);
    const res = await postTransaction(h, apiKey, {
      app_id: appId,
      type: 'pay',
      reference: `order-${++orders}`,
      transaction_hash: hash,
      chain: 'worldchain',
      from: accounts[0],
      ...fields,
    });
    expect(res.status).toBe(201);
    expect(res.body.transaction_status).toBe('pending');
    return res.body.transaction_id;
  }

  /** What a merchant sees (status, reason header) and what the operator sees (the history). */
  async function seen(id: string) {
    const lookup = await lookupTransaction(h, apiKey, id, appId);
    expect(lookup.status).toBe(200);
    const detail = await h.admin('get', `/transactions/${id}`);
    return {
      status: lookup.body.transaction_status as string,
      reasonHeader: (lookup.headers['transaction-status-reason'] as string | undefined) ?? null,
      history: (
        detail.body.history as {
          from_status: string | null;
          to_status: string;
          source: string;
          reason: string | null;
          reason_detail: string | null;
        }[]
      ).map((x) => [x.from_status, x.to_status, x.source, x.reason]),
      lastDetail: detail.body.history.at(-1).reason_detail as string | null,
    };
  }

  it('a good ERC-20 payment (18-decimal token) becomes mined, only once its block has the configured confirmations', async () => {
    const hash = await transfer(wld, accounts[1], units('1500000', 18));
    const id = await record(hash, { token: 'WLD', to: accounts[1], token_amount: '1500000' });
    const w = watcher({ finality: 2 });
    expect(await w.tick()).toEqual({ [id]: 'waiting' });
    expect((await seen(id)).status).toBe('pending');
    await rpc('evm_mine');
    expect(await w.tick()).toEqual({ [id]: 'mined' });
    const { blockNumber } = await client.getTransactionReceipt({ hash });
    expect(await seen(id)).toMatchObject({
      status: 'mined',
      reasonHeader: null,
      history: [
        [null, 'pending', expect.stringMatching(/^api:key_[0-9a-f]{32}$/), null],
        ['pending', 'mined', `chain:success@${blockNumber}`, null],
      ],
    });
  });

  it('a good 6-decimal payment and a good native payment become mined', async () => {
    const token = await record(await transfer(usdce, accounts[1], 2500000n), {
      token: 'USDCE',
      to: accounts[1],
      token_amount: '2500000',
    });
    const native = await record(await send({ to: accounts[2], value: units('1000', 18) }), {
      token: 'ETH',
      to: accounts[2],
      token_amount: '1000',
    });
    expect(await watcher().tick()).toEqual({ [token]: 'mined', [native]: 'mined' });
    expect((await seen(token)).status).toBe('mined');
    expect((await seen(native)).status).toBe('mined');
  });

  it('an underpayment fails with wrong_amount, shown in the lookup header and the history', async () => {
    const hash = await transfer(wld, accounts[1], units('1499999', 18));
    const id = await record(hash, { token: 'WLD', to: accounts[1], token_amount: '1500000' });
    expect(await watcher().tick()).toEqual({ [id]: 'failed' });
    const result = await seen(id);
    expect(result).toMatchObject({ status: 'failed', reasonHeader: 'wrong_amount' });
    expect(result.history.at(-1)).toEqual([
      'pending',
      'failed',
      expect.stringMatching(/^chain:success@\d+$/),
      'wrong_amount',
    ]);
    expect(result.lastDetail).toBe(
      `Transferred ${units('1499999', 18)} base units of WLD (${getAddress(wld)}) (18 decimals); recorded token_amount 1500000 (6 decimals).`,
    );
  });

  it('a native underpayment fails with wrong_amount; an overpayment is not exact either', async () => {
    const under = await record(await send({ to: accounts[2], value: units('999', 18) }), {
      token: 'ETH',
      to: accounts[2],
      token_amount: '1000',
    });
    const over = await record(await transfer(usdce, accounts[1], 2500001n), {
      token: 'USDCE',
      to: accounts[1],
      token_amount: '2500000',
    });
    expect(await watcher().tick()).toEqual({ [under]: 'failed', [over]: 'failed' });
    expect((await seen(under)).reasonHeader).toBe('wrong_amount');
    expect((await seen(over)).reasonHeader).toBe('wrong_amount');
  });

  it('a transfer to another address fails with wrong_recipient', async () => {
    const erc20 = await record(await transfer(wld, accounts[3], units('1500000', 18)), {
      token: 'WLD',
      to: accounts[1],
      token_amount: '1500000',
    });
    const native = await record(await send({ to: accounts[3], value: units('1000', 18) }), {
      token: 'ETH',
      to: accounts[2],
      token_amount: '1000',
    });
    expect(await watcher().tick()).toEqual({ [erc20]: 'failed', [native]: 'failed' });
    for (const id of [erc20, native]) {
      const result = await seen(id);
      expect(result).toMatchObject({ status: 'failed', reasonHeader: 'wrong_recipient' });
      expect(result.history.at(-1)?.[3]).toBe('wrong_recipient');
    }
  });

  it('a transfer of another token fails with wrong_token, even for the same number', async () => {
    const id = await record(await transfer(usdce, accounts[1], 1500000n), {
      token: 'WLD',
      to: accounts[1],
      token_amount: '1500000',
    });
    const nativeAsToken = await record(await send({ to: accounts[1], value: 1500000n }), {
      token: 'USDCE',
      to: accounts[1],
      token_amount: '1500000',
    });
    expect(await watcher().tick()).toEqual({ [id]: 'failed', [nativeAsToken]: 'failed' });
    expect((await seen(id)).reasonHeader).toBe('wrong_token');
    expect((await seen(nativeAsToken)).reasonHeader).toBe('wrong_token');
  });

  it('a reverted transfer (more than the balance) fails with reverted', async () => {
    const hash = await transfer(wld, accounts[0], 10n ** 40n, accounts[3]); // far more than accounts[3] holds
    expect((await client.getTransactionReceipt({ hash })).status).toBe('reverted');
    const id = await record(hash, {
      token: 'WLD',
      from: accounts[3],
      to: accounts[0],
      token_amount: '10000000000000000000000',
    });
    expect(await watcher().tick()).toEqual({ [id]: 'failed' });
    const result = await seen(id);
    expect(result).toMatchObject({ status: 'failed', reasonHeader: 'reverted' });
    expect(result.history.at(-1)).toEqual([
      'pending',
      'failed',
      expect.stringMatching(/^chain:reverted@\d+$/),
      'reverted',
    ]);
  });

  it('a block reorganised away before finality sends the payment back to waiting; it is mined only once final again', async () => {
    const nonce = await client.getTransactionCount({ address: accounts[0] });
    const raw = await privateKeyToAccount(ACCOUNT_0_KEY).signTransaction({
      chainId: 1337,
      nonce,
      to: wld,
      data: encodeFunctionData({
        abi: TEST_TOKEN_ABI,
        functionName: 'transfer',
        args: [accounts[1], units('700000', 18)],
      }),
      gas: 100000n,
      gasPrice: await client.getGasPrice(),
    });
    const snapshot = await rpc('evm_snapshot');
    const hash = await client.sendRawTransaction({ serializedTransaction: raw });
    const firstBlock = (await client.getTransactionReceipt({ hash })).blockNumber;
    const id = await record(hash, { token: 'WLD', to: accounts[1], token_amount: '700000' });
    const w = watcher({ finality: 3 });
    expect(await w.tick()).toEqual({ [id]: 'waiting' });

    // the block that held it is reorganised away, and the chain grows past where it would have been final
    expect(await rpc('evm_revert', [snapshot])).toBe(true);
    for (let i = 0; i < 3; i++) await rpc('evm_mine');
    expect(await w.tick()).toEqual({ [id]: 'reorged' });
    expect(await seen(id)).toMatchObject({ status: 'pending', reasonHeader: null });
    expect(await w.tick()).toEqual({ [id]: 'waiting' });

    // the same transaction is included again, in a later block: its confirmations count from there
    await client.sendRawTransaction({ serializedTransaction: raw });
    const secondBlock = (await client.getTransactionReceipt({ hash })).blockNumber;
    expect(secondBlock).toBeGreaterThan(firstBlock);
    expect(await w.tick()).toEqual({ [id]: 'waiting' });
    await rpc('evm_mine');
    expect(await w.tick()).toEqual({ [id]: 'waiting' });
    await rpc('evm_mine');
    expect(await w.tick()).toEqual({ [id]: 'mined' });
    const result = await seen(id);
    expect(result.status).toBe('mined');
    expect(result.history.at(-1)).toEqual(['pending', 'mined', `chain:success@${secondBlock}`, null]);
  });

  it('a payment whose block is reorganised away and never included again fails as dropped', async () => {
    const snapshot = await rpc('evm_snapshot');
    const hash = await transfer(wld, accounts[1], units('1', 18));
    const id = await record(hash, { token: 'WLD', to: accounts[1], token_amount: '1' });
    expect(await watcher({ finality: 5 }).tick()).toEqual({ [id]: 'waiting' });
    await rpc('evm_revert', [snapshot]);
    for (let i = 0; i < 5; i++) await rpc('evm_mine');
    expect(await watcher({ finality: 5 }).tick()).toEqual({ [id]: 'reorged' });
    expect(await watcher({ finality: 5, dropTimeoutMs: 0 }).tick()).toEqual({ [id]: 'dropped' });
    expect(await seen(id)).toMatchObject({ status: 'failed', reasonHeader: 'dropped' });
  });

  it('takes the safe or finalized block as final when CHAIN_FINALITY names a tag', async () => {
    // ganache reports its latest block as safe and finalized, so a payment there is final at once
    const id = await record(await transfer(usdce, accounts[1], 5n), {
      token: 'USDCE',
      to: accounts[1],
      token_amount: '5',
    });
    expect(await watcher({ finality: 'finalized' }).tick()).toEqual({ [id]: 'mined' });
  });

  it('fails a transaction the chain never saw, after the drop timeout', async () => {
    const hash = `0x${'ab'.repeat(32)}` as Hash;
    const id = await record(hash, { token: 'WLD', to: accounts[1], token_amount: '1' });
    expect(await watcher({ dropTimeoutMs: 60000 }).tick()).toEqual({ [id]: 'waiting' });
    expect(await watcher({ dropTimeoutMs: 0 }).tick()).toEqual({ [id]: 'dropped' });
    expect(await seen(id)).toMatchObject({ status: 'failed', reasonHeader: 'dropped' });
  });

  it('fails a token with no configured contract (recorded by an operator) rather than trusting it', async () => {
    const hash = await send({ to: accounts[1], value: 1n });
    const t = await recordTransaction(h, appId, {
      from: accounts[0],
      to: accounts[1],
      token: 'DOGE',
      token_amount: '1',
      transaction_hash: hash,
    });
    expect(await watcher().tick()).toEqual({ [t.transaction_id]: 'failed' });
    expect((await seen(t.transaction_id)).reasonHeader).toBe('unknown_token');
  });

  it('ignores other chains and transactions without a hash; replicas never process one twice', async () => {
    const other = await recordTransaction(h, appId, { chain: 'ethereum', transaction_hash: `0x${'cd'.repeat(32)}` });
    await recordTransaction(h, appId);
    const id = await record(await send({ to: accounts[2], value: units('1', 18) }), {
      token: 'ETH',
      to: accounts[2],
      token_amount: '1',
    });
    const replicas = [watcher(), watcher(), watcher()];
    const results = await Promise.all(replicas.map((w) => w.tick()));
    const merged = results.flatMap((r) => Object.entries(r));
    expect(merged.filter(([tid]) => tid === id)).toEqual([[id, 'mined']]);
    expect(merged.find(([tid]) => tid === other.transaction_id)).toBeUndefined();
    expect((await seen(id)).history.filter((x) => x[1] === 'mined')).toHaveLength(1);
  });

  it('two pending records of one transaction (made before migration 006) race on two replicas: one mined, the other failed already_claimed', async () => {
    const hash = await transfer(usdce, accounts[1], 7n);
    const receipt = await client.getTransactionReceipt({ hash });
    const migrations = readMigrations(path.join(__dirname, '..', 'migrations'));
    const db = await testDatabase('transactions');
    const apps = [newAppId(), newAppId()];
    const ids = [newTransactionId(), newTransactionId()];
    await migrate(
      db,
      migrations.filter((m) => m.version < 6),
    );
    for (const [i, app] of apps.entries())
      await db.query(
        `INSERT INTO transactions (id, app_id, type, reference, transaction_hash, status, from_address, to_address, chain, token, token_amount)
         VALUES ($1, $2, 'pay', 'order-1', $3, 'pending', $4, $5, 'worldchain', 'USDCE', 7)`,
        [ids[i], app, hash, accounts[0], accounts[1]],
      );
    await migrate(db, migrations);
    const legacy = await transactionsHarness({ CHAIN_TOKENS: chainTokens }, { db });
    try {
      const keys = [(await apiKeyFor(legacy, apps[0])).api_key, (await apiKeyFor(legacy, apps[1])).api_key];
      const replica = () =>
        new ChainWatcher(
          pool,
          transactionStore(db),
          new TransactionService(db, legacy.storage.bus),
          {
            chain: 'worldchain',
            tokens: legacy.config.CHAIN_TOKENS.worldchain,
            finality: 1,
            dropTimeoutMs: 60000,
            intervalMs: 50,
            batchSize: 1,
          },
          testLogger,
        );
      const outcomes = Object.assign({}, ...(await Promise.all([replica().tick(), replica().tick()])));
      expect(Object.keys(outcomes).sort()).toEqual([...ids].sort());
      expect(Object.values(outcomes).sort()).toEqual(['failed', 'mined']);
      const winner = ids.findIndex((id) => outcomes[id] === 'mined');
      const loser = 1 - winner;

      const won = await lookupTransaction(legacy, keys[winner], ids[winner], apps[winner]);
      expect(won.body.transaction_status).toBe('mined');
      const lost = await lookupTransaction(legacy, keys[loser], ids[loser], apps[loser]);
      expect(lost.status).toBe(200);
      expect(lost.body.transaction_status).toBe('failed');
      expect(lost.headers['transaction-status-reason']).toBe('already_claimed');
      const detail = await legacy.admin('get', `/transactions/${ids[loser]}`);
      expect(detail.body.status_reason).toBe('already_claimed');
      expect(detail.body.history.at(-1)).toMatchObject({
        from_status: 'pending',
        to_status: 'failed',
        source: `chain:success@${receipt.blockNumber}`,
        reason: 'already_claimed',
        reason_detail: 'The chain holds this payment, but another recorded payment claimed the same transaction first.',
      });
      // the loser's app is told by webhook, with the reason
      const [event] = await db.query<{ type: string; body: string }>(
        "SELECT type, body FROM webhook_events WHERE transaction_id = $1 AND type <> 'transaction.created'",
        [ids[loser]],
      );
      expect(event.type).toBe('transaction.failed');
      expect(JSON.parse(event.body).data).toMatchObject({
        transaction_id: ids[loser],
        transaction_status: 'failed',
        status_reason: 'already_claimed',
      });
      expect(await db.query('SELECT transaction_id, log_index FROM transfer_claims')).toEqual([
        { transaction_id: ids[winner], log_index: receipt.logs[0].logIndex },
      ]);
      // and the transaction cannot be recorded a third time (by the app that receives at its address)
      await receiveAt(legacy, apps[loser], accounts[1]);
      const again = await postTransaction(legacy, keys[loser], {
        app_id: apps[loser],
        type: 'pay',
        reference: 'order-2',
        transaction_hash: hash,
        chain: 'worldchain',
        token: 'USDCE',
        from: accounts[0],
        to: accounts[1],
        token_amount: '7',
      });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('transaction_already_claimed');
    } finally {
      await legacy.close();
      await db.close();
    }
  });

  it('runs inside the service when CHAIN_RPC_URL is set', async () => {
    const service = await transactionsHarness({
      CHAIN_RPC_URL: rpcUrl,
      CHAIN_POLL_INTERVAL_MS: '100',
      CHAIN_TOKENS: chainTokens,
      CHAIN_FINALITY: '1',
    });
    try {
      const app = newAppId();
      const key = (await apiKeyFor(service, app)).api_key;
      await receiveAt(service, app, accounts[1]);
      const hash = await transfer(wld, accounts[1], units('42', 18));
      const posted = await postTransaction(service, key, {
        app_id: app,
        type: 'pay',
        reference: 'service-order',
        transaction_hash: hash,
        chain: 'worldchain',
        token: 'WLD',
        from: accounts[0],
        to: accounts[1],
        token_amount: '42',
      });
      expect(posted.status).toBe(201);
      const deadline = Date.now() + 10000;
      let current = 'pending';
      while (current === 'pending' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        current = (await lookupTransaction(service, key, posted.body.transaction_id, app)).body.transaction_status;
      }
      expect(current).toBe('mined');
    } finally {
      await service.close();
    }
  }, 60000);
});
