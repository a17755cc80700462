import http from 'node:http';
import type { AddressInfo } from 'node:net';
import ganache from 'ganache';
import { createWalletClient, http as viemHttp, type Hash } from 'viem';
import { freePort } from '../../../../packages/common/test/support/throwaway';
import { TEST_TOKEN_ABI, TEST_TOKEN_BYTECODE } from '../fixtures/test-token';

export type Address = `0x${string}`;

/** A ganache node on a free port, its deterministic accounts, and helpers to pay in a test ERC-20. */
export interface LocalChain {
  url: string;
  accounts: Address[];
  rpc(method: string, params?: unknown[]): Promise<unknown>;
  mine(blocks?: number): Promise<void>;
  deployToken(decimals: number): Promise<Address>;
  /** A transfer of the test token, from accounts[0] unless `from` (another of the node's unlocked accounts). */
  transfer(token: Address, to: Address, value: bigint, from?: Address): Promise<Hash>;
  close(): Promise<void>;
}

export async function localChain(): Promise<LocalChain> {
  const port = await freePort();
  // ganache's bundled typings resolve ServerOptions to undefined under TS 5.9; the options are its documented ones.
  const options = {
    logging: { quiet: true },
    wallet: { deterministic: true, totalAccounts: 4 },
    chain: { chainId: 1337 },
  };
  const server = ganache.server(options as unknown as Parameters<typeof ganache.server>[0]);
  await server.listen(port, '127.0.0.1');
  const url = `http://127.0.0.1:${port}`;
  const wallet = createWalletClient({ transport: viemHttp(url) });
  const accounts = (await wallet.getAddresses()) as Address[];
  const rpc = (method: string, params: unknown[] = []) =>
    wallet.request({ method: method as 'eth_accounts', params: params as never });
  const write = (address: Address, functionName: 'mint' | 'transfer', args: [Address, bigint], from = accounts[0]) =>
    wallet.writeContract({
      address,
      abi: TEST_TOKEN_ABI,
      functionName,
      args,
      account: from,
      chain: null,
      gas: 100000n,
    });
  return {
    url,
    accounts,
    rpc,
    async mine(blocks = 1) {
      for (let i = 0; i < blocks; i++) await rpc('evm_mine');
    },
    async deployToken(decimals) {
      const hash = await wallet.deployContract({
        abi: TEST_TOKEN_ABI,
        bytecode: TEST_TOKEN_BYTECODE,
        args: [decimals],
        account: accounts[0],
        chain: null,
        gas: 1000000n,
      });
      const receipt = (await rpc('eth_getTransactionReceipt', [hash])) as unknown as { contractAddress: Address };
      await write(receipt.contractAddress, 'mint', [accounts[0], 10n ** 30n]);
      return receipt.contractAddress;
    },
    transfer: (token, to, value, from) => write(token, 'transfer', [to, value], from),
    close: () => server.close(),
  };
}

type JsonRpcMessage = { id?: unknown; method?: string; result?: unknown };

/**
 * An RPC in front of `target` that changes answers: `rewrite(method, result)` returns the result to send.
 * With no rewrite it passes everything through (a second RPC that agrees, at another URL).
 */
export async function rpcProxy(
  target: string,
  rewrite: (method: string, result: unknown) => unknown = (_method, result) => result,
): Promise<{ url: string; close(): Promise<void> }> {
  async function answer(body: string, res: http.ServerResponse): Promise<void> {
    const sent = JSON.parse(body) as JsonRpcMessage | JsonRpcMessage[];
    const forwarded = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const got = (await forwarded.json()) as JsonRpcMessage | JsonRpcMessage[];
    const methodOf = (id: unknown) => [sent].flat().find((m) => m.id === id)?.method ?? '';
    const change = (m: JsonRpcMessage) => ('result' in m ? { ...m, result: rewrite(methodOf(m.id), m.result) } : m);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(Array.isArray(got) ? got.map(change) : change(got)));
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void answer(Buffer.concat(chunks).toString('utf8'), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** An "RPC" that answers every request with `status` and a body that is not JSON-RPC. */
export async function garbageRpc(status = 200): Promise<{ url: string; requests(): number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(status, { 'content-type': 'text/html' }).end('<html>bad gateway</html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A URL on which nothing listens (an RPC that is down). */
export async function downRpc(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}
