import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedTarget } from './outbound-guard';

export interface PostResult {
  statusCode: number;
  retryAfter?: string;
  /** The answer's first `readBody` bytes as text (NUL characters dropped), when asked for. */
  body?: string;
  /** The answer was longer than `body`, or was cut short. */
  bodyTruncated?: boolean;
}

/**
 * POSTs `body` to `url`, connecting to `target` (the address already checked) whatever DNS says now;
 * TLS still verifies the certificate for the URL's host name. Settles when the answer's status line
 * arrives, or fails after timeoutMs in all; `signal` aborts it (shutdown). No connection is kept.
 * With `readBody` (bytes), it settles once that much of the answer's body has arrived, or all of it, or
 * timeoutMs (in all) has passed, and gives that part as text; without, the body is not read.
 */
export function postToTarget(
  url: URL,
  target: ResolvedTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
  readBody = 0,
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
    /** Settles with the body read so far, once the answer has come (set on its status line). */
    let settleBody: ((truncated: boolean) => void) | null = null;
    const timer = setTimeout(() => {
      settleBody?.(true);
      req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    timer.unref();
    req.on('response', (res) => {
      const retryAfter = res.headers['retry-after'];
      const answer: PostResult = {
        statusCode: res.statusCode ?? 0,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      };
      res.on('error', () => undefined);
      if (readBody <= 0) {
        clearTimeout(timer);
        res.resume();
        return resolve(answer);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const settle = (truncated: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const text = Buffer.concat(chunks).subarray(0, readBody).toString('utf8').replace(/\0/g, '');
        resolve({ ...answer, body: text, bodyTruncated: truncated || size > readBody });
      };
      settleBody = settle;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size > readBody) {
          settle(true);
          res.destroy();
        }
      });
      res.on('end', () => settle(false));
      res.on('close', () => settle(!res.complete));
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}
