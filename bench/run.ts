/**
 * `pnpm bench` (issue #10): Attest measured as an outsider would, beside its references, in one run.
 * The servers run pinned to core 0, this autocannon driver on core 1; each scenario gets a warm-up
 * and a measured run, repeated; medians are reported, every response is checked. Writes
 * bench/results/<timestamp>.{md,json} and latest.md. Always exits 0 once it has a report (it is a
 * report, not a test); "targets met: N of M" says how it went. How to run and read it: bench/README.md.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt, realCommandLine } from './build';
import { measure, measureInterleaved, runOnce, type DriveOptions, type Measurement, type Workload } from './drive';
import { MemoryWatch } from './memory';
import { parseOptions, type BenchOptions } from './options';
import { startExpressFloor } from './peers/express-floor';
import { startOidcPeer } from './peers/oidc-provider';
import {
  evaluate,
  fmt,
  markdown,
  writeReport,
  type GrowthRow,
  type MemoryRow,
  type Report,
  type ScenarioRow,
} from './report';
import { floorWorkload, scenario, selectScenarios, type AttestTarget, type Scenario } from './scenarios';
import { countRows, insertQuotes, insertTransactions, seedAttest, settle, signIn } from './seed';
import {
  dropDatabase,
  recreateDatabase,
  SERVICES,
  startEmbedded,
  startReal,
  startRedis,
  type Deployment,
  type Mode,
} from './stack';
import { describeMachine, mb, pinDriver, rss, type Pinning } from './system';

const ROOT = path.resolve(__dirname, '..');
const EMBEDDED_LIMIT_MB = 500;
const SERVICE_LIMIT_MB = 150;
const MISS_TAG = 1;
const GROWTH_TAG = 2;
const GROWTH_LOOKUP_SET = 1000;
const GROWTH_SMALL = { transactions: 1000, quotes: 100 };
/** The growth rows' two databases (Postgres + Redis) live side by side: BENCH_DATABASE with a suffix each. */
const growthDatabaseName = (name: string, i: number) => `${name.slice(0, 50)}_growth_${i ? 'large' : 'small'}`;

const log = (line: string) => process.stdout.write(`${line}\n`);
const elapsed = (t0: number) => `${((Date.now() - t0) / 1000).toFixed(0)} s`;

/** Everything started is stopped, whatever happens (also on Ctrl-C). */
const cleanups: (() => Promise<void>)[] = [];
/** Stops what was started since `mark` (a length of `cleanups`), newest first; everything by default. */
async function cleanupAll(mark = 0): Promise<void> {
  while (cleanups.length > mark) await cleanups.pop()!().catch((err: Error) => log(`cleanup: ${err.message}`));
}
function onCleanup(fn: () => Promise<void>): () => Promise<void> {
  let done = false;
  const once = async () => {
    if (done) return;
    done = true;
    await fn();
  };
  cleanups.push(once);
  return once;
}

function gitCommit(): string {
  try {
    const hash = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${hash} (with uncommitted changes)` : hash;
  } catch {
    return 'unknown';
  }
}

async function timedInterleaved(
  label: string,
  works: { label: string; work: Workload }[],
  drive: DriveOptions,
): Promise<Measurement[]> {
  log(`  ${label}`);
  const ms = await measureInterleaved(works, drive, log);
  ms.forEach((m, i) =>
    log(
      `  → ${works[i].label}: ${m.rate}/s, p99 ${m.p99} ms${m.errors ? `, ${m.errors} ERRORS (${Object.keys(m.errorKinds).join(', ')})` : ''}`,
    ),
  );
  return ms;
}

async function timed(label: string, work: Workload, drive: DriveOptions): Promise<Measurement> {
  log(`  ${label}`);
  const m = await measure(work, drive, log);
  log(
    `  → ${m.rate}/s, p99 ${m.p99} ms${m.errors ? `, ${m.errors} ERRORS (${Object.keys(m.errorKinds).join(', ')})` : ''}`,
  );
  return m;
}

/** Starts a deployment of Attest, seeds it (and the cache-miss set), signs in. */
async function deployAttest(
  mode: Mode,
  options: BenchOptions,
  pinning: Pinning,
  logDir: string,
  bulk: { missSet?: number; growth?: { transactions: number; quotes: number } },
  databaseName = options.databaseName,
): Promise<{ deploy: Deployment; target: AttestTarget; stored: { transactions: number; quotes: number } }> {
  const t0 = Date.now();
  let deploy: Deployment;
  if (mode === 'embedded') {
    deploy = await startEmbedded(pinning, logDir, options.logLevel);
  } else {
    const databaseUrl = await recreateDatabase(options.postgresUrl, databaseName);
    onCleanup(() => dropDatabase(options.postgresUrl, databaseName));
    const redis = await startRedis();
    onCleanup(() => redis.stop());
    deploy = await startReal(pinning, logDir, databaseUrl, redis.url, options.logLevel);
  }
  onCleanup(() => deploy.stop());
  log(`  started in ${elapsed(t0)}`);
  const basics = await seedAttest(deploy);
  const stored = { transactions: NaN, quotes: NaN };
  if (bulk.missSet || bulk.growth) {
    const t1 = Date.now();
    // embedded: the stack stops while PGlite's files are written, and starts again after
    stored.transactions = await deploy.withDatabase('transactions', async (db) => {
      if (bulk.missSet) await insertTransactions(db, basics.appId, MISS_TAG, bulk.missSet, 'pending');
      if (bulk.growth) await insertTransactions(db, basics.appId, GROWTH_TAG, bulk.growth.transactions, 'mined');
      await settle(db, 'transactions');
      return countRows(db, 'transactions');
    });
    if (bulk.growth) {
      const quotes = bulk.growth.quotes;
      stored.quotes = await deploy.withDatabase('prices', async (db) => {
        await insertQuotes(db, quotes);
        await settle(db, 'quotes');
        return countRows(db, 'quotes');
      });
    }
    // the bulk load's writes leave the kernel's page cache before anything is measured: a writeback
    // during a measurement would slow the servers' own writes (their request log) and blame it on them
    execFileSync('sync');
    log(
      `  bulk rows inserted in ${elapsed(t1)}: ${stored.transactions} transactions${bulk.growth ? `, ${stored.quotes} quotes` : ''} stored`,
    );
  }
  const session = await signIn(deploy.origins.identity, deploy.env.BASE_URL!, basics.appId, basics.clientSecret);
  return {
    deploy,
    target: {
      origins: deploy.origins,
      issuer: deploy.env.BASE_URL!,
      seed: { ...basics, ...session },
      missSet: bulk.missSet ?? 1,
      growthSet: GROWTH_LOOKUP_SET,
    },
    stored,
  };
}

/** 60 s (BENCH_MEMORY_SECONDS) of mixed load on the three services at once; RSS of each at half time and at the end. */
async function soak(deploy: Deployment, target: AttestTarget, options: BenchOptions): Promise<MemoryRow[]> {
  const per = Math.max(1, Math.floor(options.connections / 3));
  const identity: Workload = {
    origin: target.origins.identity,
    unit: 'request',
    steps: [...scenario('userinfo').attest(target).steps, ...scenario('introspect').attest(target).steps],
  };
  const loads = [identity, scenario('tx-miss').attest(target), scenario('prices').attest(target)];
  const servers = deploy.servers();
  const pids = servers.map((s) => s.nodePid());
  const half: (number | undefined)[] = [];
  const end: (number | undefined)[] = [];
  const halfTimer = setTimeout(
    () => pids.forEach((pid, i) => (half[i] = mb(rss(pid)))),
    (options.memorySeconds / 2) * 1000,
  );
  const endTimer = setTimeout(
    () => pids.forEach((pid, i) => (end[i] = mb(rss(pid)))),
    (options.memorySeconds - 0.5) * 1000,
  );
  const results = await Promise.all(loads.map((w) => runOnce(w, per, options.memorySeconds)));
  clearTimeout(halfTimer);
  clearTimeout(endTimer);
  log(
    `  soak load: ${results.map((r, i) => `${servers[i].name} ${r.rate}/s${r.errors ? ` (${r.errors} errors)` : ''}`).join(', ')}`,
  );
  return servers.map((s, i) => ({
    mode: 'real' as const,
    process: s.name,
    when: `${options.memorySeconds} s soak (userinfo+introspect, uncached lookups, prices; ${per} connections each)${results[i].errors ? `; ${results[i].errors} errors` : ''}`,
    atHalfMb: half[i],
    atEndMb: end[i],
    limitMb: SERVICE_LIMIT_MB,
  }));
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const startedAt = new Date().toISOString();
  const t0 = Date.now();
  const pinning = pinDriver();
  const machine = describeMachine();
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-bench-'));
  const drive: DriveOptions = {
    connections: options.connections,
    seconds: options.seconds,
    warmupSeconds: options.warmupSeconds,
    repetitions: options.repetitions,
  };
  const chosen = options.growthOnly ? [] : selectScenarios(options.scenarios);
  const rows: ScenarioRow[] = chosen.map((s) => ({ scenario: s, notes: [] }));
  const memory: MemoryRow[] = [];
  const growth: GrowthRow[] = [];
  const notes: string[] = [];
  const modes: Mode[] = options.embeddedOnly ? ['embedded'] : options.realOnly ? ['real'] : ['embedded', 'real'];
  const needsFloor = chosen.some((s) => s.embedded.reference === 'floor' || s.real.reference === 'floor');
  const withPeer = chosen.filter((s): s is Scenario & { oidc: NonNullable<Scenario['oidc']> } => !!s.oidc);
  log(
    `Attest bench: ${chosen.map((s) => s.key).join(', ')}; modes: ${modes.join(', ')}${options.memory ? '; memory soak' : ''}${options.growth ? '; growth' : ''}`,
  );
  log(`pinning: ${pinning.note}`);
  // the real-server rows run the services' build output, as the images do
  if (modes.includes('real')) ensureBuilt(log);

  let floor: Measurement | undefined;
  // the stock floor stays up: rows with a floor target measure it again in turn with themselves
  let floorPeer: Awaited<ReturnType<typeof startExpressFloor>> | undefined;
  let stopFloor: (() => Promise<void>) | undefined;
  if (needsFloor || options.growth) {
    log('\nExpress 5 hello world (the floor)');
    const peer = await startExpressFloor(pinning, logDir);
    const stop = onCleanup(() => peer.stop());
    floor = await timed('GET / → hello', floorWorkload(peer.origin), drive);
    memory.push({
      mode: 'reference',
      process: 'express hello world',
      when: 'after its load',
      mb: mb(rss(peer.server.nodePid())),
    });
    if (!needsFloor) await stop();
    else {
      [floorPeer, stopFloor] = [peer, stop];
      log('\nExpress 5 hello world, its requests made with the app’s prototypes (as Attest’s listeners make them)');
      const variant = await startExpressFloor(pinning, logDir, true);
      const stopVariant = onCleanup(() => variant.stop());
      const m = await timed('GET / → hello', floorWorkload(variant.origin), drive);
      await stopVariant();
      notes.push(
        `Express hello world whose server makes requests and responses with the app's prototypes, as Attest's listeners do: ${fmt(m.rate)}/s, p99 ${fmt(m.p99, 2)} ms${m.errors ? `, ${fmt(m.errors)} errors` : ''} (the floor, stock \`app.listen\`: ${fmt(floor.rate)}/s)`,
      );
    }
  }

  if (withPeer.length) {
    log('\noidc-provider 9.13.3');
    const peer = await startOidcPeer(pinning, logDir);
    const stop = onCleanup(() => peer.stop());
    // oidc-provider's in-memory adapter keeps 1,000 entries (an LRU): the round trip's thousands of grants
    // would evict the token that /introspect and /userinfo use, so the round trip runs last
    const ordered = [...withPeer.filter((s) => s.key !== 'signin'), ...withPeer.filter((s) => s.key === 'signin')];
    for (const s of ordered) rows.find((r) => r.scenario === s)!.oidc = await timed(s.name, s.oidc(peer), drive);
    memory.push({
      mode: 'reference',
      process: 'oidc-provider',
      when: 'after its load',
      mb: mb(rss(peer.server.nodePid())),
    });
    await stop();
  }

  for (const mode of modes) {
    if (!rows.length && !(mode === 'real' && options.memory)) continue;
    log(`\nAttest, ${mode === 'embedded' ? 'embedded (pnpm start)' : 'Postgres + Redis (one process per service)'}`);
    const mark = cleanups.length;
    const missSet =
      chosen.some((s) => s.key === 'tx-miss') || (mode === 'real' && options.memory) ? options.missSet : undefined;
    const { deploy, target } = await deployAttest(mode, options, pinning, logDir, { missSet });
    const watch = new MemoryWatch(deploy.servers());
    for (const row of rows) {
      let m: Measurement;
      if (floorPeer && row.scenario[mode].reference === 'floor' && row.scenario[mode].minRatio !== undefined) {
        // measured in turn with the floor, so that the ratio compares two figures of the same minutes
        const [f, a] = await timedInterleaved(
          row.scenario.name,
          [
            { label: 'Express floor', work: floorWorkload(floorPeer.origin) },
            { label: 'Attest', work: row.scenario.attest(target) },
          ],
          drive,
        );
        (row.floor ??= {})[mode] = f;
        m = a;
      } else m = await timed(row.scenario.name, row.scenario.attest(target), drive);
      row[mode] = m;
      if (row.scenario.key === 'tx-miss') {
        row.notes.push(
          `${mode}: ${options.missSet.toLocaleString('en-US')} distinct pending transactions looked up in turn; at the measured rate one cycle takes ${(options.missSet / Math.max(1, m.rate)).toFixed(1)} s`,
        );
      }
    }
    const readings = watch.stop();
    for (const r of readings) {
      if (mode === 'embedded')
        memory.push({
          mode,
          process: 'pnpm start (all three services)',
          when: 'peak over the embedded scenarios',
          mb: r.peakMb,
          limitMb: EMBEDDED_LIMIT_MB,
        });
      else memory.push({ mode, process: r.process, when: 'peak over the scenarios', mb: r.peakMb });
    }
    if (mode === 'real' && options.memory) {
      log(`  memory soak: ${options.memorySeconds} s`);
      memory.push(...(await soak(deploy, target, options)));
    }
    await deploy.stop();
    await cleanupAll(mark);
  }
  await stopFloor?.();

  if (options.growth) {
    const sizes = [GROWTH_SMALL, { transactions: options.growthLarge, quotes: options.growthLarge }];
    for (const mode of modes) {
      // Both sizes are deployed side by side and measured in turn (interleaved repetitions), so that the
      // only difference between the two figures is the number of stored rows, not the moment they ran.
      const deployed: {
        deploy: Deployment;
        target: AttestTarget;
        counted: { transactions: number; quotes: number };
      }[] = [];
      for (const [i, size] of sizes.entries()) {
        log(
          `\nGrowth, ${mode}: ${size.transactions.toLocaleString('en-US')} transactions, ${size.quotes.toLocaleString('en-US')} extra quotes`,
        );
        const { deploy, target, stored } = await deployAttest(
          mode,
          options,
          pinning,
          logDir,
          { growth: size },
          growthDatabaseName(options.databaseName, i),
        );
        deployed.push({ deploy, target, counted: stored });
      }
      log(`\nGrowth, ${mode}: both deployments measured in turn`);
      const labels = sizes.map((s) => `${s.transactions.toLocaleString('en-US')} rows`);
      const growthDrive = { ...drive, repetitions: options.growthRepetitions };
      const [txSmall, txLarge] = await timedInterleaved(
        scenario('tx-growth').name,
        deployed.map((d, i) => ({ label: labels[i], work: scenario('tx-growth').attest(d.target) })),
        growthDrive,
      );
      const [pricesSmall, pricesLarge] = await timedInterleaved(
        scenario('prices').name,
        deployed.map((d, i) => ({ label: labels[i], work: scenario('prices').attest(d.target) })),
        growthDrive,
      );
      for (const d of deployed) await d.deploy.stop();
      await cleanupAll();
      const [small, large] = deployed.map((d) => d.counted);
      growth.push({
        mode,
        scenario: 'transaction lookup (1,000 ids in turn)',
        smallRows: small.transactions,
        largeRows: large.transactions,
        small: txSmall,
        large: txLarge,
      });
      growth.push({
        mode,
        scenario: 'price lookup (2 × 3)',
        smallRows: small.quotes,
        largeRows: large.quotes,
        small: pricesSmall,
        large: pricesLarge,
      });
    }
    notes.push(
      "growth: rows counted in the service's tables after the bulk insert (the seeded transaction and the seed feed's quotes included); the added quotes are older observations, so the latest price is unchanged",
    );
  }

  const partial: Omit<Report, 'verdicts'> = {
    startedAt,
    finishedAt: new Date().toISOString(),
    commit: gitCommit(),
    command: [
      ...Object.entries(process.env)
        .filter(([k]) => k.startsWith('BENCH_'))
        .map(([k, v]) => `${k}=${v}`),
      'pnpm bench',
      ...process.argv.slice(2),
    ].join(' '),
    machine,
    pinning: pinning.note,
    options,
    realCommand: modes.includes('real') ? realCommandLine(SERVICES) : undefined,
    floor,
    rows,
    memory,
    growth,
    notes: [...notes, `total time ${elapsed(t0)}`],
  };
  const errors = [
    floor,
    ...rows.flatMap((r) => [r.embedded, r.real, r.oidc, r.floor?.embedded, r.floor?.real]),
    ...growth.flatMap((g) => [g.small, g.large]),
  ].some((m) => m && m.errors > 0);
  if (errors || process.env.BENCH_KEEP_LOGS) partial.notes.unshift(`server logs of this run: ${logDir}`);
  else fs.rmSync(logDir, { recursive: true, force: true });
  const report: Report = { ...partial, verdicts: evaluate(partial) };
  log(`\n${markdown(report)}`);
  if (options.write)
    for (const file of writeReport(report, path.join(ROOT, 'bench', 'results')))
      log(`wrote ${path.relative(ROOT, file)}`);
}

process.on('SIGINT', () => {
  log('interrupted: stopping servers');
  void cleanupAll().then(() => process.exit(130));
});

main()
  .catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
