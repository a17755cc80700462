import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { decodeFunctionResult, encodeFunctionData, getAddress, toHex, type Address, type Hex } from 'viem';
import { eip3009ABI } from '@x402/evm';
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
        const answer = (c: (typeof calls)[number]) => ({
          jsonrpc: '2.0',
          id: c.id,
          result: answers.get(c.params[0].data.slice(0, 10)),
        });
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
  });

  const chain = () => new X402Chain(x402Client(x402Transport([url], 5_000)), 480);
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

  it('sends viem’s calldata to the token at the latest block, both reads in one batch, every time', async () => {
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
            data: encodeFunctionData({ abi: eip3009ABI, functionName: 'authorizationState', args: [a.from, a.nonce] }),
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
  });

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

  it('refuses what is no answer of these functions, as viem does: nothing (no contract), short, a bool that is not 0 or 1', async () => {
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
  });
});
