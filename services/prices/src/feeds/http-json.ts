import { isLosslessNumber, parse } from 'lossless-json';

export interface HttpOptions {
  timeoutMs: number;
  retries: number;
  /** First backoff delay; doubles each retry, with jitter. */
  backoffMs?: number;
  /** Extra request headers (an API key); never logged or put in an error. */
  headers?: Record<string, string>;
}

export class FeedError extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * GET a JSON document with a timeout and retries with exponential backoff (network errors, timeouts,
 * 5xx, 429 and unparsable bodies are retried; other 4xx are not). Numbers stay exact decimal strings.
 */
export async function fetchJson(url: string, options: HttpOptions): Promise<unknown> {
  let lastError: Error = new FeedError('no attempt made');
  for (let attempt = 0; attempt <= options.retries; attempt++) {
    if (attempt > 0) {
      const base = (options.backoffMs ?? 250) * 2 ** (attempt - 1);
      await sleep(base / 2 + Math.random() * (base / 2));
    }
    try {
      const res = await fetch(url, {
        headers: { ...options.headers, accept: 'application/json' },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      const text = await res.text();
      if (res.status >= 500 || res.status === 429) throw new FeedError(`HTTP ${res.status} from ${new URL(url).host}`);
      if (!res.ok) {
        lastError = new FeedError(`HTTP ${res.status} from ${new URL(url).host}`);
        break;
      }
      try {
        return parse(text, null, (value) => value);
      } catch {
        throw new FeedError(`Response from ${new URL(url).host} is not valid JSON`);
      }
    } catch (err) {
      const e = err as Error;
      lastError = e.name === 'TimeoutError' ? new FeedError(`Timed out after ${options.timeoutMs} ms`) : e;
    }
  }
  throw lastError;
}

/** A JSON number (kept lossless) or numeric string, as its exact decimal text. */
export function decimalText(value: unknown): string | null {
  if (isLosslessNumber(value)) return value.value;
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) return value;
  return null;
}

/** Lossless numbers written in exponent form ("1e-7") as plain decimal text. */
export function plainDecimal(text: string): string | null {
  const m = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return null;
  const digits = m[1] + (m[2] ?? '');
  const point = m[1].length + Number(m[3] ?? 0);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}
