import fc from 'fast-check';
import type { Express } from 'express';
import { answered, listen, rawRequest, type Listening } from './raw-http';
import { describeRequest, judge } from './fuzz-judge';
import { requestArbitrary } from './fuzz-requests';
import type { FuzzSurface } from './fuzz-surface';

/**
 * Property-based hostile-input testing of a service over a real socket (issue #9). Every request must
 * be answered within the deadline, by the app, never with a 5xx, with no internals in the body, and
 * errors in the shape each endpoint promises.
 *
 * Seeds: a fixed one (the same cases on every CI run) and a fresh one (new cases every run).
 * FUZZ_SEED (and FUZZ_PATH) replay one failing case; FUZZ_RUNS sets the runs per seed;
 * FUZZ_SHRINK=1 shrinks a failure to a smaller request; FUZZ_REPORT=1 prints the figures.
 */

export interface FuzzStats {
  requests: number;
  byStatus: Record<string, number>;
  serverErrors: number;
  hangs: number;
}

export const FIXED_SEED = 20261123;
const DEADLINE_MS = 5000;

export const newStats = (): FuzzStats => ({ requests: 0, byStatus: {}, serverErrors: 0, hangs: 0 });

function record(stats: FuzzStats, res: Awaited<ReturnType<typeof rawRequest>>): void {
  stats.requests += 1;
  const key = String(res.status);
  stats.byStatus[key] = (stats.byStatus[key] ?? 0) + 1;
  if (res.status === 'timeout') stats.hangs += 1;
  if (answered(res) && res.status >= 500) stats.serverErrors += 1;
}

export interface FuzzRun {
  seed: number;
  failure: string | null;
}

/**
 * Runs the property for one seed; the failure names the request and how to replay it.
 * `testFile` is the path given in the reproduction command.
 */
export async function fuzzService(
  port: number,
  surface: FuzzSurface,
  options: { seed: number; runs: number; testFile: string; stats: FuzzStats },
): Promise<FuzzRun> {
  const property = fc.asyncProperty(requestArbitrary(surface), async (req) => {
    const res = await rawRequest(port, req, DEADLINE_MS);
    record(options.stats, res);
    if (!answered(res))
      throw new Error(
        res.status === 'timeout'
          ? `no answer within ${DEADLINE_MS} ms (a hang)`
          : 'the connection closed without an answer',
      );
    const problem = judge(surface, req, res);
    if (problem) throw new Error(`${problem}: ${res.status} ${res.text.slice(0, 300)}`);
  });
  const path = process.env.FUZZ_PATH;
  const details = await fc.check(property, {
    seed: options.seed,
    numRuns: options.runs,
    ...(path ? { path } : {}),
    endOnFailure: process.env.FUZZ_SHRINK !== '1',
  });
  if (!details.failed) return { seed: options.seed, failure: null };
  const [req] = details.counterexample ?? [];
  const reason = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return {
    seed: options.seed,
    failure: [
      `fuzz failure with seed ${details.seed}, path ${details.counterexamplePath}:`,
      `  request: ${req ? describeRequest(req) : '(none)'}`,
      `  answer: ${reason}`,
      `  reproduce: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath} pnpm test -- ${options.testFile}`,
      '  (add FUZZ_SHRINK=1 to shrink it to a smaller request)',
    ].join('\n'),
  };
}

/** The seeds of this run: FUZZ_SEED alone when given, else the fixed seed and a fresh one. */
export function fuzzSeeds(): number[] {
  const given = process.env.FUZZ_SEED;
  if (given !== undefined && given !== '') return [Number(given)];
  return [FIXED_SEED, Math.floor(Math.random() * 0x7fffffff)];
}

export const fuzzRuns = () => Number(process.env.FUZZ_RUNS ?? 500);

export function reportStats(service: string, stats: FuzzStats): void {
  if (process.env.FUZZ_REPORT !== '1') return;
  process.stdout.write(
    `fuzz ${service}: ${stats.requests} requests, 5xx: ${stats.serverErrors}, hangs: ${stats.hangs}, ` +
      `by status ${JSON.stringify(stats.byStatus)}\n`,
  );
}

/** What a fuzz suite needs of a service's test harness: its public app, and close(). */
export interface FuzzedHarness {
  publicApp: Express;
  close(): Promise<void>;
}

/**
 * The fuzz suite of one service: starts the harness, builds the surface from it, listens on a real
 * socket, and runs the property once per seed (`seed %i`); FUZZ_REPORT=1 prints the figures after.
 * `testFile` is the path given in a failure's reproduction command.
 */
export function describeFuzz<H extends FuzzedHarness>(
  service: string,
  testFile: string,
  start: { harness: () => Promise<H>; surface: (h: H) => FuzzSurface | Promise<FuzzSurface> },
): void {
  describe(`${service} fuzz: hostile input never hangs, never 5xx, always the error shape`, () => {
    let h: H | undefined;
    let server: Listening | undefined;
    let surface: FuzzSurface;
    const stats = newStats();

    beforeAll(async () => {
      h = await start.harness();
      surface = await start.surface(h);
      server = await listen(h.publicApp);
    }, 120_000);
    afterAll(async () => {
      reportStats(service, stats);
      await server?.close();
      await h?.close();
    });

    it.each(fuzzSeeds())(
      'seed %i',
      async (seed) => {
        const run = await fuzzService(server!.port, surface, { seed, runs: fuzzRuns(), testFile, stats });
        if (run.failure) throw new Error(run.failure);
      },
      600_000,
    );
  });
}
