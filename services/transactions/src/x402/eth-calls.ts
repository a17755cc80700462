import http from 'node:http';
import https from 'node:https';
import type { Address, Hex, PublicClient } from 'viem';
import { MAX_BODY_BYTES, rpcAgents } from './rpc-fetch';

/** One eth_call at the latest block: what the node answered as its result (not yet decoded). */
export type EthCall = (to: Address, data: Hex) => Promise<unknown>;

/** eth_call through viem's client: its transport's batching, retries, failover, timeout and errors. */
export const clientEthCall =
  (client: PublicClient): EthCall =>
  (to, data) =>
    client.request({ method: 'eth_call', params: [{ to, data }, 'latest'] });

/** The most calls in one JSON-RPC batch (as x402Transport's). */
const BATCH_SIZE = 50;
/** After the direct request fails, calls go through viem alone for this long. */
const BACK_OFF_MS = 5_000;

interface Pending {
  to: Address;
  data: Hex;
  resolve: (result: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * verify's two reads (the nonce's state, the payer's balance) as eth_calls batched by x402 itself: the calls made
 * until the next timers phase of the event loop (those of the verifies read meanwhile, as viem's batch gathered
 * them) go to the first RPC URL as one JSON-RPC batch over node:http, and each call whose answer is a plain
 * result (no error) takes it.
 *
 * Why: viem's transport wraps each call in its request builder (dedupe, retry), its batch scheduler and timers,
 * and each batch in a `Response` and an abort signal — a fifth of a verify's CPU in its profile, more than the
 * HTTP request itself. That machinery matters only when something goes wrong, so it still handles every case that
 * is not a plain answer: a call is asked again through viem's client (`fallback`: its retries, failover to the
 * next RPC URL, timeout and errors, exactly as before) when the direct request fails (no connection, a status
 * other than 200, a body that is no JSON-RPC batch answer, over MAX_BODY_BYTES, past the timeout), when the
 * node answered that call with an error, or left it out. After a failed request, calls go through viem alone
 * for BACK_OFF_MS (an RPC that is down is not asked twice per call). Nothing is kept: every call reaches a node.
 *
 * Only for an http(s) URL without credentials in it (viem turns those into a Basic header); otherwise, or with
 * no URL, every call is viem's.
 */
export function batchedEthCall(url: string | undefined, timeoutMs: number, fallback: EthCall): EthCall {
  const target = directTarget(url);
  if (!target) return fallback;
  let pending: Pending[] = [];
  let skipUntil = 0;
  let nextId = 1;

  const viaFallback = (p: Pending) => fallback(p.to, p.data).then(p.resolve, p.reject);

  const send = (batch: Pending[]) => {
    const firstId = nextId;
    nextId += batch.length;
    if (nextId > 1e15) nextId = 1;
    const body = JSON.stringify(
      batch.map((p, i) => ({
        jsonrpc: '2.0',
        id: firstId + i,
        method: 'eth_call',
        params: [{ to: p.to, data: p.data }, 'latest'],
      })),
    );
    let settled = false;
    // the whole batch failed as a request: each call is viem's
    const failed = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      skipUntil = Date.now() + BACK_OFF_MS;
      for (const p of batch) void viaFallback(p);
    };
    const answered = (text: string) => {
      if (settled) return;
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch {
        return failed();
      }
      if (!Array.isArray(data)) return failed();
      settled = true;
      clearTimeout(timer);
      const byId = new Map<unknown, { result?: unknown; error?: unknown }>();
      for (const item of data as unknown[])
        if (typeof item === 'object' && item !== null) byId.set((item as { id?: unknown }).id, item);
      batch.forEach((p, i) => {
        const item = byId.get(firstId + i);
        // as viem's http transport: an answer without an error is its result, whatever it is (decoded later)
        if (item && !item.error) p.resolve(item.result);
        else void viaFallback(p);
      });
    };
    const request = target.module.request(
      target.url,
      {
        method: 'POST',
        agent: target.agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return failed();
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) {
            res.destroy();
            failed();
          } else chunks.push(chunk);
        });
        res.on('error', failed);
        res.on('close', () => {
          if (!res.complete) failed();
        });
        res.on('end', () => answered(Buffer.concat(chunks).toString('utf8')));
      },
    );
    const timer = setTimeout(() => {
      failed();
      request.destroy();
    }, timeoutMs);
    request.on('error', failed);
    request.end(body);
  };

  const flush = () => {
    const batch = pending;
    pending = [];
    if (batch.length) send(batch);
  };

  return (to, data) => {
    if (Date.now() < skipUntil) return fallback(to, data);
    return new Promise((resolve, reject) => {
      const waiting = pending.push({ to, data, resolve, reject });
      // sent with the calls of the next timers phase, as viem's batch (`wait: 0`) sent them: the calls of the
      // verifies read in this turn and the next go together (fewer would at the end of this turn alone)
      if (waiting === 1) setTimeout(flush, 0);
      else if (waiting === BATCH_SIZE) flush();
    });
  };
}

interface DirectTarget {
  url: URL;
  module: typeof http | typeof https;
  agent: http.Agent;
}

function directTarget(url: string | undefined): DirectTarget | null {
  if (!url) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.username || parsed.password) return null;
  if (parsed.protocol === 'http:') return { url: parsed, module: http, agent: rpcAgents['http:'] };
  if (parsed.protocol === 'https:') return { url: parsed, module: https, agent: rpcAgents['https:'] };
  return null;
}
