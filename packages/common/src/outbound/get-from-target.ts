import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedTarget } from './outbound-guard';

export interface GetResult {
  statusCode: number;
  body: string;
  /** The answer's headers (lower-case names), e.g. its caching. */
  headers: http.IncomingHttpHeaders;
}

/**
 * GETs `url`, connecting to `target` (the address resolveTarget checked) whatever DNS says now; TLS still
 * verifies the certificate for the URL's host name. No redirect is followed (a redirect could lead past
 * the guard); an answer longer than maxBytes, or one that does not arrive within timeoutMs in all, fails.
 */
export function getFromTarget(
  url: URL,
  target: ResolvedTarget,
  headers: Record<string, string>,
  options: { timeoutMs: number; maxBytes: number },
): Promise<GetResult> {
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all)
      (callback as unknown as (err: null, addresses: { address: string; family: number }[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method: 'GET', headers, agent: false, lookup: pinned });
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer within ${options.timeoutMs / 1000} s`)),
      options.timeoutMs,
    );
    timer.unref();
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) {
          clearTimeout(timer);
          req.destroy();
          reject(new Error(`the answer is longer than ${options.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({
          statusCode: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: res.headers,
        });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}
