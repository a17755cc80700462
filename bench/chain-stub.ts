/**
 * A JSON-RPC endpoint for the x402 verify row (issue 43), in the bench process on a loopback port: it
 * answers what the transactions service asks a chain, from fixed state. The row measures Attest's verify
 * (its checks, its EIP-712 signature recovery, its RPC client and its database read), not a node's EVM:
 * ganache, as the x402 tests use, runs an `eth_call` in milliseconds and would be the bottleneck it
 * measured. The state is that of World Chain's bridged USDC as the service is configured by default
 * (CHAIN_TOKENS): EIP-5267 `eip712Domain` answers its name and version, `authorizationState` answers that
 * no nonce is used, `balanceOf` that every payer holds 1,000,000 USDC; no account has code (every payer
 * is an EOA). The chain watcher's calls get an empty chain that does not move (a block, no logs).
 * Batches (JSON arrays) are answered as one.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeAbiParameters, encodeFunctionResult, parseAbi, toFunctionSelector } from 'viem';

export const STUB_CHAIN_ID = 480;
/** The EIP-712 domain of the token, as the stub's eip712Domain answers it. */
export const STUB_TOKEN_NAME = 'Bridged USDC';
export const STUB_TOKEN_VERSION = '2';
const BALANCE = 1_000_000n * 10n ** 6n;
const HEAD = 1_000_000;

const domainAbi = parseAbi([
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
]);

const SELECTORS = {
  domain: toFunctionSelector('eip712Domain()'),
  authorizationState: toFunctionSelector('authorizationState(address,bytes32)'),
  balanceOf: toFunctionSelector('balanceOf(address)'),
};
const NOT_USED = encodeAbiParameters([{ type: 'bool' }], [false]);
const HOLDS = encodeAbiParameters([{ type: 'uint256' }], [BALANCE]);
/** eip712Domain's answer for each token asked (the address is part of it), encoded once. */
const domains = new Map<string, string>();

/** eth_call answers by function selector, whichever contract is asked (every one answers as the token). */
function callResult(data: string, to: string): string | null {
  switch (data.slice(0, 10).toLowerCase()) {
    case SELECTORS.domain: {
      let domain = domains.get(to);
      if (!domain) {
        domain = encodeFunctionResult({
          abi: domainAbi,
          functionName: 'eip712Domain',
          result: [
            '0x0f',
            STUB_TOKEN_NAME,
            STUB_TOKEN_VERSION,
            BigInt(STUB_CHAIN_ID),
            to as `0x${string}`,
            `0x${'0'.repeat(64)}`,
            [],
          ],
        });
        domains.set(to, domain);
      }
      return domain;
    }
    case SELECTORS.authorizationState:
      return NOT_USED;
    case SELECTORS.balanceOf:
      return HOLDS;
    default:
      return null;
  }
}

const hex = (n: number) => `0x${n.toString(16)}`;
const block = (n: number) => ({
  number: hex(n),
  hash: `0x${n.toString(16).padStart(64, '0')}`,
  parentHash: `0x${(n - 1).toString(16).padStart(64, '0')}`,
  timestamp: hex(1_700_000_000 + n * 2),
  nonce: '0x0000000000000000',
  sha3Uncles: `0x${'0'.repeat(64)}`,
  logsBloom: `0x${'0'.repeat(512)}`,
  transactionsRoot: `0x${'0'.repeat(64)}`,
  stateRoot: `0x${'0'.repeat(64)}`,
  receiptsRoot: `0x${'0'.repeat(64)}`,
  miner: `0x${'0'.repeat(40)}`,
  difficulty: '0x0',
  totalDifficulty: '0x0',
  extraData: '0x',
  size: '0x200',
  gasLimit: '0x1c9c380',
  gasUsed: '0x0',
  baseFeePerGas: '0x1',
  transactions: [],
  uncles: [],
});

type RpcRequest = { id?: unknown; method?: string; params?: unknown[] };

function answer(req: RpcRequest): object {
  const ok = (result: unknown) => ({ jsonrpc: '2.0', id: req.id ?? null, result });
  const params = req.params ?? [];
  switch (req.method) {
    case 'eth_chainId':
      return ok(hex(STUB_CHAIN_ID));
    case 'net_version':
      return ok(String(STUB_CHAIN_ID));
    case 'eth_blockNumber':
      return ok(hex(HEAD));
    case 'eth_getBlockByNumber': {
      const tag = params[0];
      return ok(block(typeof tag === 'string' && tag.startsWith('0x') ? Math.min(Number(tag), HEAD) : HEAD));
    }
    case 'eth_getLogs':
      return ok([]);
    case 'eth_getCode':
      return ok('0x');
    case 'eth_getTransactionReceipt':
    case 'eth_getTransactionByHash':
      return ok(null);
    case 'eth_call': {
      const call = (params[0] ?? {}) as { to?: string; data?: string; input?: string };
      const result = callResult(call.data ?? call.input ?? '0x', call.to ?? `0x${'0'.repeat(40)}`);
      if (result !== null) return ok(result);
      return { jsonrpc: '2.0', id: req.id ?? null, error: { code: 3, message: 'execution reverted' } };
    }
    default:
      return {
        jsonrpc: '2.0',
        id: req.id ?? null,
        error: { code: -32601, message: `${req.method} is not served here` },
      };
  }
}

export interface ChainStub {
  url: string;
  /** JSON-RPC calls answered (a batch counts each of its calls) and HTTP requests that carried them. */
  counts(): { calls: number; requests: number };
  close(): Promise<void>;
}

export async function startChainStub(): Promise<ChainStub> {
  let calls = 0;
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: string;
      try {
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RpcRequest | RpcRequest[];
        requests++;
        if (Array.isArray(parsed)) {
          calls += parsed.length;
          body = JSON.stringify(parsed.map(answer));
        } else {
          calls++;
          body = JSON.stringify(answer(parsed));
        }
      } catch {
        body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({ calls, requests }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
