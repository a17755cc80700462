/**
 * Drives one scenario against one target with autocannon from this process: a warm-up run (not
 * counted), then a measured run, repeated; every response is checked, and only correct responses
 * (or completed round trips) count as throughput. Medians over the repetitions.
 */
import autocannon from 'autocannon';
import { performance } from 'node:perf_hooks';

export type Headers = Record<string, string>;

/** A reason the response is wrong, or null when it is right. */
export type Check = (status: number, body: string, headers: Headers, state: ConnectionState) => string | null;

/** Per-connection state carried from one step to the next (e.g. an authorization code). */
export type ConnectionState = Record<string, string | number | undefined>;

export interface Step {
  method: 'GET' | 'POST';
  path: string;
  headers?: Headers;
  body?: string;
  /** Builds this request from the connection's state; null skips the rest of the sequence (the previous step failed). */
  prepare?(state: ConnectionState): { path?: string; body?: string; headers?: Headers } | null;
  check: Check;
}

export interface Workload {
  /** Origin, e.g. http://127.0.0.1:4000 (loopback only). */
  origin: string;
  /** One request, or a sequence per connection repeated in order (a sign-in round trip). */
  steps: Step[];
  /** 'request': each correct response counts; 'trip': a correct last step counts one trip. */
  unit: 'request' | 'trip';
  /**
   * Called before each run (warm-up or measured) with its number of connections, not measured: e.g. to top up
   * what the requests use up (the refresh-token row's tokens). autocannon gives each connection a fresh
   * state at the start of every sequence, so what must last from one sequence to the next lives here.
   */
  beforeRun?(connections: number): Promise<void>;
}

export interface RunResult {
  seconds: number;
  /** Correct responses (or trips) per second. */
  rate: number;
  /** Latency percentiles in ms: of each response (unit request) or of each whole trip (unit trip). */
  p50: number;
  p99: number;
  good: number;
  errors: number;
  /** Reasons with counts, e.g. {"status 500": 3}. */
  errorKinds: Record<string, number>;
  /** A sample of a wrong response, to show what went wrong. */
  errorSample?: string;
}

export interface Measurement extends RunResult {
  repetitions: RunResult[];
}

export interface DriveOptions {
  connections: number;
  seconds: number;
  warmupSeconds: number;
  repetitions: number;
}

function percentile(sorted: Float64Array, q: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

const round = (n: number, digits = 2) => (Number.isFinite(n) ? Math.round(n * 10 ** digits) / 10 ** digits : n);

function assertLoopback(origin: string): URL {
  const url = new URL(origin);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
    throw new Error(`refusing to load a non-loopback address: ${origin}`);
  return url;
}

/** Latencies as a growable Float64 buffer (no per-sample objects while measuring). */
class Samples {
  private data = new Float64Array(1 << 16);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

/** One autocannon run of `seconds`. */
export async function runOnce(work: Workload, connections: number, seconds: number): Promise<RunResult> {
  const url = assertLoopback(work.origin);
  await work.beforeRun?.(connections);
  const latencies = new Samples();
  const errorKinds: Record<string, number> = {};
  let good = 0;
  let errors = 0;
  let errorSample: string | undefined;
  const fail = (reason: string, sample: string) => {
    errors++;
    errorKinds[reason] = (errorKinds[reason] ?? 0) + 1;
    errorSample ??= sample.slice(0, 300);
  };
  const last = work.steps.length - 1;
  const requests: autocannon.Request[] = work.steps.map((step, i) => ({
    method: step.method,
    path: step.path,
    headers: step.headers,
    body: step.body,
    // only dynamic requests are rebuilt per request (autocannon builds static ones once)
    ...(step.prepare || (work.unit === 'trip' && i === 0)
      ? {
          setupRequest(request: autocannon.Request, context: object) {
            const state = context as ConnectionState;
            if (i === 0) state.t0 = performance.now();
            if (!step.prepare) return request;
            const prepared = step.prepare(state);
            if (!prepared) return undefined as unknown as autocannon.Request; // restart the sequence
            return { ...request, ...prepared, headers: { ...request.headers, ...prepared.headers } };
          },
        }
      : {}),
    onResponse(status: number, body: string, context: object, headers: autocannon.Request['headers']) {
      const state = context as ConnectionState;
      const flat: Headers = {};
      for (const [k, v] of Object.entries(headers ?? {}))
        flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
      const problem = step.check(status, body, flat, state);
      if (problem) {
        fail(problem, `${step.method} ${step.path} → ${status} ${body}`);
        return;
      }
      if (work.unit === 'request') good++;
      else if (i === last) {
        good++;
        latencies.push(performance.now() - Number(state.t0));
      }
    },
  }));
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      { url: url.origin, connections, duration: seconds, requests, timeout: 10, excludeErrorStats: false },
      (err: Error | null, res: autocannon.Result) => (err ? reject(err) : resolve(res)),
    );
    if (work.unit === 'request')
      instance.on('response', (_client: autocannon.Client, _status: number, _bytes: number, ms: number) =>
        latencies.push(ms),
      );
  });
  const transportErrors = result.errors;
  if (transportErrors) {
    errors += transportErrors;
    errorKinds[`connection errors/timeouts`] = transportErrors;
  }
  const elapsed = (result.finish.getTime() - result.start.getTime()) / 1000;
  const sorted = latencies.sorted();
  return {
    seconds: round(elapsed),
    rate: Math.round(good / elapsed),
    p50: round(percentile(sorted, 0.5)),
    p99: round(percentile(sorted, 0.99)),
    good,
    errors,
    errorKinds,
    errorSample,
  };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The median of each figure over the repetitions (totals for the counts). */
export function summarize(reps: RunResult[]): Measurement {
  const errorKinds: Record<string, number> = {};
  for (const rep of reps) for (const [k, n] of Object.entries(rep.errorKinds)) errorKinds[k] = (errorKinds[k] ?? 0) + n;
  return {
    seconds: round(median(reps.map((r) => r.seconds))),
    rate: Math.round(median(reps.map((r) => r.rate))),
    p50: round(median(reps.map((r) => r.p50))),
    p99: round(median(reps.map((r) => r.p99))),
    good: reps.reduce((a, r) => a + r.good, 0),
    errors: reps.reduce((a, r) => a + r.errors, 0),
    errorKinds,
    errorSample: reps.find((r) => r.errorSample)?.errorSample,
    repetitions: reps,
  };
}

const repLine = (label: string, r: number, of: number, rep: RunResult) =>
  `    ${label}rep ${r + 1}/${of}: ${rep.rate}/s p99 ${rep.p99} ms${rep.errors ? `, ${rep.errors} errors` : ''}`;

/** Warm-up + measurement, `repetitions` times; medians of rate and p99; errors summed over the measured runs. */
export async function measure(
  work: Workload,
  options: DriveOptions,
  progress: (line: string) => void = () => undefined,
): Promise<Measurement> {
  const reps: RunResult[] = [];
  for (let r = 0; r < options.repetitions; r++) {
    if (options.warmupSeconds > 0) await runOnce(work, options.connections, options.warmupSeconds);
    const rep = await runOnce(work, options.connections, options.seconds);
    progress(repLine('', r, options.repetitions, rep));
    reps.push(rep);
  }
  return summarize(reps);
}

/**
 * Measures workloads that are to be compared with each other (the same lookup on two deployments)
 * in turn, repetition by repetition, each with its own warm-up; every other repetition in reverse
 * order (A B, B A, A B …). A machine that gets slower or faster while they run (another tenant, the
 * kernel writing back a bulk load) then weighs on all of them alike instead of on whichever ran last.
 */
export async function measureInterleaved(
  works: { label: string; work: Workload }[],
  options: DriveOptions,
  progress: (line: string) => void = () => undefined,
): Promise<Measurement[]> {
  const reps: RunResult[][] = works.map(() => []);
  for (let r = 0; r < options.repetitions; r++) {
    const order = works.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    for (const i of order) {
      const { label, work } = works[i];
      if (options.warmupSeconds > 0) await runOnce(work, options.connections, options.warmupSeconds);
      const rep = await runOnce(work, options.connections, options.seconds);
      progress(repLine(`${label}: `, r, options.repetitions, rep));
      reps[i].push(rep);
    }
  }
  return reps.map(summarize);
}
