import http from 'node:http';
import https from 'node:https';

/**
 * `fetch` for x402's JSON-RPC transport (viem's `fetchFn`), over node:http and node:https with keep-alive
 * agents. undici's `fetch` cost 0.43–0.46 ms of CPU a request against the bench's chain stub, node:http with its
 * answer wrapped in a Response 0.1 ms (bench/README.md, "x402 verify and its chain"): every verify reads the
 * chain, so this is paid on each one. It does what viem asks of fetch: a POST with a string body, the abort
 * signal of its timeout, a Response with the status, headers and body. It follows no redirect (a JSON-RPC
 * endpoint answers where it is asked; a 3xx reaches viem as an HTTP error), and refuses a body over
 * MAX_BODY_BYTES as it arrives (viem's own limit, which it checks only once the body is read).
 */
export const MAX_BODY_BYTES = 10_485_760;

/** Keep-alive agents of x402's JSON-RPC requests (this fetch, and eth-calls.ts's batches). */
export const rpcAgents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

/** Statuses whose Response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function rpcFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      reject(new TypeError(`rpcFetch: ${url.protocol} is not http or https`));
      return;
    }
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
      reject(new TypeError('rpcFetch: the body must be a string (viem sends JSON text)'));
      return;
    }
    const body = init.body ?? undefined;
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: init.method ?? 'GET',
        headers,
        agent: rpcAgents[url.protocol],
        signal: init.signal ?? undefined,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) res.destroy(new Error(`rpcFetch: a response body over ${MAX_BODY_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(new Error('rpcFetch: the response ended before its body'));
        });
        res.on('end', () => {
          try {
            const status = res.statusCode ?? 0;
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(res.headers))
              for (const one of [value ?? []].flat()) responseHeaders.append(name, one);
            resolve(
              new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), {
                status,
                statusText: res.statusMessage,
                headers: responseHeaders,
              }),
            );
          } catch (err) {
            // a status the Response constructor refuses (under 200, over 599)
            reject(err);
          }
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
