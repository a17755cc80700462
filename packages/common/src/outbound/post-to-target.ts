import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedTarget } from './outbound-guard';

export interface PostResult {
  statusCode: number;
  retryAfter?: string;
}

/**
 * POSTs `body` to `url`, connecting to `target` (the address already checked) whatever DNS says now;
 * TLS still verifies the certificate for the URL's host name. Settles when the answer's status line
 * arrives, or fails after timeoutMs in all; `signal` aborts it (shutdown). No connection is kept.
 */
export function postToTarget(
  url: URL,
  target: ResolvedTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<PostResult> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all)
      (callback as unknown as (err: null, addresses: { address: string; family: number }[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: false,
      lookup: pinned,
      signal,
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    timer.unref();
    req.on('response', (res) => {
      clearTimeout(timer);
      const retryAfter = res.headers['retry-after'];
      res.on('error', () => undefined);
      res.resume();
      resolve({ statusCode: res.statusCode ?? 0, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}
