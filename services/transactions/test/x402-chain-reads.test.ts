import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { decodeFunctionResult, encodeFunctionData, getAddress, toHex, type Address, type Hex } from 'viem';
import { eip3009ABI } from '@x402/evm';
import { batchedEthCall, clientEthCall } from '../src/x402/eth-calls';
import {
  X402Chain,
  decodeBool,
  decodeUint,
  x402Client,
  x402Transport,
  type Authorization,
} from '../src/x402/x402-chain';

/**
 * verify's two chain reads (the nonce's state, the payer's balance) are eth_calls encoded and decoded in
 * x402-chain.ts rather than by viem's readContract: the calldata is viem's, byte for byte, the answers are read as
 * viem reads them (and refused where it refuses them), every call reaches the node (nothing kept), and the reads
 * made together still go as one JSON-RPC batch.
 */
describe('x402’s chain reads (balanceOf, authorizationState)', () => {
  let server: http.Server;
  let url: string;
  let requests: { method: string; params: [{ to: string; data: string }, string] }[][] = [];
  /** What the node answers to eth_call, by the calldata's selector. */
  const answers = new Map<string, unknown>();
  /** A JSON-RPC error the node answers to eth_call instead, by selector. */
  const rpcErrors = new Map<string, { code: number; message: string }>();
  /** HTTP statuses the next requests get instead of an answer (then 200s again). */
  let statuses: number[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const parsed = JSON.parse(body) as
          | { id: number; method: string; params: [{ to: string; data: string }, string] }
          | { id: number; method: string; params: [{ to: string; data: string }, string] }[];
        const calls = Array.isArray(parsed) ? parsed : [parsed];
        requests.push(calls.map(({ method, params }) => ({ method, params })));
        const status = statuses.shift();
        if (status !== undefined) {
          res.writeHead(status, { 'content-type': 'text/plain' });
          res.end('busy');
          return;
        }
        const answer = (c: (typeof calls)[number]) => {
          const selector = c.params[0].data.slice(0, 10);
          const error = rpcErrors.get(selector);
          return error
            ? { jsonrpc: '2.0', id: c.id, error }
            : { jsonrpc: '2.0', id: c.id, result: answers.get(selector) };
        };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(parsed) ? calls.map(answer) : answer(calls[0])));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    requests = [];
    answers.clear();
    rpcErrors.clear();
    statuses = [];
  });

  /** The reads through viem's client alone, or batched by eth-calls.ts (as the facilitator makes them). */
  let batched = false;
  const chain = () => {
    const client = x402Client(x402Transport([url], 5_000));
    return new X402Chain(client, 480, batched ? batchedEthCall(url, 5_000, clientEthCall(client)) : undefined);
  };
  const address = (): Address => getAddress(toHex(randomBytes(20)));
  const authorization = (from: Address): Authorization => ({
    from,
    to: address(),
    value: '1000000',
    validAfter: '0',
    validBefore: '1900000000',
    nonce: toHex(randomBytes(32)),
  });
  const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}` as Hex;

  const modes = ['viem’s client', 'x402’s batches'];

  it.each(modes)(
    'sends viem’s calldata to the token at the latest block, both reads in one batch, every time (%s)',
    async (mode) => {
      batched = mode !== modes[0];
      const token = address();
      const payer = address();
      const a = authorization(payer);
      answers.set('0x70a08231', word(5_000_000n));
      answers.set('0xe94a0102', word(0n));
      const c = chain();
      for (let round = 0; round < 2; round++) {
        const [used, balance] = await Promise.all([c.authorizationUsed(token, a), c.balanceOf(token, payer)]);
        expect([used, balance]).toEqual([false, 5_000_000n]);
      }
      const expected = [
        {
          method: 'eth_call',
          params: [
            {
              to: token,
              data: encodeFunctionData({
                abi: eip3009ABI,
                functionName: 'authorizationState',
                args: [a.from, a.nonce],
              }),
            },
            'latest',
          ],
        },
        {
          method: 'eth_call',
          params: [
            { to: token, data: encodeFunctionData({ abi: eip3009ABI, functionName: 'balanceOf', args: [payer] }) },
            'latest',
          ],
        },
      ];
      // asked again the second time (no balance nor nonce state is kept), each time as one request of two calls
      expect(requests).toEqual([expected, expected]);

      answers.set('0x70a08231', word(7n));
      answers.set('0xe94a0102', word(1n));
      expect(await Promise.all([c.authorizationUsed(token, a), c.balanceOf(token, payer)])).toEqual([true, 7n]);
    },
  );

  it('reads the answers as viem’s decoder reads them', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }), fc.uint8Array({ maxLength: 40 }), (n, tail) => {
        // a node may answer more than the word (viem reads the first 32 bytes)
        const result = `${word(n)}${toHex(tail).slice(2)}` as Hex;
        expect(decodeUint(result)).toBe(
          decodeFunctionResult({ abi: eip3009ABI, functionName: 'balanceOf', data: result }),
        );
      }),
      { numRuns: 200 },
    );
    for (const n of [0n, 1n])
      expect(decodeBool(word(n))).toBe(
        decodeFunctionResult({ abi: eip3009ABI, functionName: 'authorizationState', data: word(n) }),
      );
  });

  it.each(modes)(
    'refuses what is no answer of these functions, as viem does: nothing (no contract), short, a bool that is not 0 or 1 (%s)',
    async (mode) => {
      batched = mode !== modes[0];
      for (const bad of ['0x', '0x01', `0x${'0'.repeat(63)}`, null, 7]) {
        expect(() => decodeUint(bad)).toThrow(/not a 32-byte word/);
        expect(() => decodeBool(bad)).toThrow(/not a 32-byte word/);
      }
      expect(() => decodeFunctionResult({ abi: eip3009ABI, functionName: 'balanceOf', data: '0x' })).toThrow();
      expect(() => decodeBool(word(2n))).toThrow(/not a bool/);
      expect(() =>
        decodeFunctionResult({ abi: eip3009ABI, functionName: 'authorizationState', data: word(2n) }),
      ).toThrow();

      // through the client: the read fails (verify answers no verdict on it)
      const token = address();
      answers.set('0x70a08231', '0x');
      answers.set('0xe94a0102', word(2n));
      const c = chain();
      await expect(c.balanceOf(token, address())).rejects.toThrow(/not a 32-byte word/);
      await expect(c.authorizationUsed(token, authorization(address()))).rejects.toThrow(/not a bool/);
    },
  );

  it('x402’s batches: a call the node answers with an error is asked again through viem’s client, which throws its error', async () => {
    const token = address();
    const payer = address();
    const a = authorization(payer);
    answers.set('0x70a08231', word(9n));
    rpcErrors.set('0xe94a0102', { code: -32000, message: 'execution reverted' });
    batched = false;
    const viemError = (await chain()
      .authorizationUsed(token, a)
      .catch((e: unknown) => e)) as Error;
    expect(viemError.name).toBe('InvalidInputRpcError');
    requests = [];
    batched = true;
    const c = chain();
    const [used, balance] = await Promise.allSettled([c.authorizationUsed(token, a), c.balanceOf(token, payer)]);
    expect(used.status === 'rejected' && (used.reason as Error).name).toBe(viemError.name);
    expect(used.status === 'rejected' && (used.reason as Error).message).toMatch(/execution reverted/);
    expect(balance).toEqual({ status: 'fulfilled', value: 9n });
    // the batch, then viem's ask of the failed call alone (not retried: viem does not retry this error)
    expect(requests.map((r) => r.map((call) => call.params[0].data.slice(0, 10)))).toEqual([
      ['0xe94a0102', '0x70a08231'],
      ['0xe94a0102'],
    ]);
  });

  it('x402’s batches: a request that fails is asked again through viem’s client, which alone asks for a while', async () => {
    const token = address();
    const payer = address();
    const a = authorization(payer);
    answers.set('0x70a08231', word(5n));
    answers.set('0xe94a0102', word(1n));
    batched = true;
    const c = chain();
    statuses = [503];
    expect(await Promise.all([c.authorizationUsed(token, a), c.balanceOf(token, payer)])).toEqual([true, 5n]);
    // the batch that got 503, then viem's batch of both
    expect(requests.map((r) => r.length)).toEqual([2, 2]);
    // viem retries as before: 503 twice more, then the answer
    requests = [];
    statuses = [503, 503];
    expect(await Promise.all([c.authorizationUsed(token, a), c.balanceOf(token, payer)])).toEqual([true, 5n]);
    expect(requests.map((r) => r.length)).toEqual([2, 2, 2]);
  });
});
