import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicClient, http as httpTransport } from 'viem';
import { MAX_BODY_BYTES, rpcFetch } from '../src/x402/rpc-fetch';

/**
 * x402's JSON-RPC transport fetches with node:http (rpc-fetch.ts): what viem reads of a fetch answer, the
 * refusals it must see as errors, and viem's client over it.
 */
describe('rpcFetch (x402’s JSON-RPC transport)', () => {
  let server: http.Server;
  let base: string;
  const seen: { method?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        seen.push({ method: req.method, headers: req.headers, body });
        switch (req.url) {
          case '/rpc': {
            const calls = JSON.parse(body) as { id: number; method: string }[] | { id: number; method: string };
            const answer = (c: { id: number; method: string }) =>
              c.method === 'eth_chainId'
                ? { jsonrpc: '2.0', id: c.id, result: '0x1e0' }
                : { jsonrpc: '2.0', id: c.id, error: { code: -32601, message: `${c.method} is not served here` } };
            res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
            res.end(JSON.stringify(Array.isArray(calls) ? calls.map(answer) : answer(calls)));
            return;
          }
          case '/down':
            res.writeHead(503, 'Busy', { 'content-type': 'text/plain' });
            res.end('try later');
            return;
          case '/moved':
            res.writeHead(301, { location: '/rpc' });
            res.end();
            return;
          case '/empty':
            res.writeHead(204);
            res.end();
            return;
          case '/huge':
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(Buffer.alloc(MAX_BODY_BYTES + 1, 0x20));
            return;
          case '/cut':
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
            res.write('{"partial":');
            setTimeout(() => res.socket?.destroy(), 20);
            return;
          default:
            // /slow: never answers
            return;
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('POSTs the body with its headers and answers status, headers and body as fetch does', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_chainId' });
    const res = await rpcFetch(`${base}/rpc`, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'application/json', Authorization: 'Basic dTpw' },
    });
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 7, result: '0x1e0' });
    const request = seen.at(-1)!;
    expect(request).toMatchObject({ method: 'POST', body });
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Basic dTpw',
      'content-length': String(Buffer.byteLength(body)),
    });
  });

  it('answers an HTTP error or a redirect as a Response (not followed), and 204 without a body', async () => {
    const down = await rpcFetch(`${base}/down`, { method: 'POST', body: '{}' });
    expect([down.status, down.ok, down.statusText, await down.text()]).toEqual([503, false, 'Busy', 'try later']);
    const moved = await rpcFetch(`${base}/moved`, { method: 'POST', body: '{}' });
    expect([moved.status, moved.headers.get('location')]).toEqual([301, '/rpc']);
    const empty = await rpcFetch(`${base}/empty`, { method: 'POST', body: '{}' });
    expect([empty.status, empty.body]).toEqual([204, null]);
  });

  it('refuses a body over the limit, a body cut short, an aborted request and a protocol other than http(s)', async () => {
    await expect(rpcFetch(`${base}/huge`, { method: 'POST', body: '{}' })).rejects.toThrow(/over 10485760 bytes/);
    await expect(rpcFetch(`${base}/cut`, { method: 'POST', body: '{}' })).rejects.toThrow();
    await expect(
      rpcFetch(`${base}/slow`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(50) }),
    ).rejects.toThrow();
    await expect(rpcFetch('file:///etc/hostname')).rejects.toThrow(/not http or https/);
  });

  it('carries viem’s client: batched calls, RPC errors, HTTP errors and timeouts as viem reports them', async () => {
    const client = (path: string, timeout = 2000) =>
      createPublicClient({
        transport: httpTransport(`${base}${path}`, { fetchFn: rpcFetch, timeout, retryCount: 0, batch: true }),
      });
    const rpc = client('/rpc');
    const [chainId, blockNumber] = await Promise.allSettled([rpc.getChainId(), rpc.getBlockNumber()]);
    // one HTTP request carried both calls
    expect(JSON.parse(seen.at(-1)!.body).map((c: { method: string }) => c.method)).toEqual([
      'eth_chainId',
      'eth_blockNumber',
    ]);
    expect(chainId).toEqual({ status: 'fulfilled', value: 480 });
    expect(blockNumber).toMatchObject({ status: 'rejected', reason: { name: 'MethodNotFoundRpcError' } });
    await expect(client('/down').getChainId()).rejects.toMatchObject({ name: 'HttpRequestError', status: 503 });
    await expect(client('/slow', 100).getChainId()).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});
