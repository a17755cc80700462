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
import { startChainStub } from './chain-stub';
import { measure, measureInterleaved, runOnce, type DriveOptions, type Measurement, type Workload } from './drive';
import { describeProcesses, describeSegments, eachMb, judgedBytes, MemoryWatch, serverMemory } from './memory';
import { parseOptions, type BenchOptions } from './options';
import { startFloor, type FloorPeer } from './peers/floor';
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
import {
  countRows,
  insertIdentityRows,
  insertQuotes,
  insertTransactions,
  seedAttest,
  setPrice,
  settle,
  signIn,
  type IdentityRows,
} from './seed';
import { streamFanOut } from './stream';
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
const EMBEDDED_IDLE_LIMIT_MB = 300;
/** How long pnpm start is left alone before its idle reading. */
const IDLE_SETTLE_MS = 10_000;
const SERVICE_LIMIT_MB = 150;
const MISS_TAG = 1;
const GROWTH_TAG = 2;
const GROWTH_LOOKUP_SET = 1000;
/** The stream row: subscribers on one prices process, and the bound a change must reach them all within. */
const STREAM_SUBSCRIBERS = Number(process.env.BENCH_STREAM_SUBSCRIBERS ?? 10_000);
const STREAM_BOUND_MS = 1000;
/** The reading after the fan-out: the streams closed (by the driver), then this long for the server to see every close. */
const STREAM_CLOSED_SETTLE_MS = 5000;
/** Identity's growth rows: users, apps and sessions (issue #28); the large size has one app per 10 users. */
const identityRows = (users: number): IdentityRows => ({
  users,
  apps: Math.max(1000, Math.round(users / 10)),
  sessions: users,
});
const GROWTH_SMALL: GrowthSize = {
  transactions: 1000,
  quotes: 100,
  identity: { users: 1000, apps: 1000, sessions: 1000 },
};
interface GrowthSize {
  transactions: number;
  quotes: number;
  identity: IdentityRows;
}
interface Stored {
  transactions: number;
  quotes: number;
  users: number;
  apps: number;
  sessions: number;
}
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
  bulk: { missSet?: number; growth?: GrowthSize },
  databaseName = options.databaseName,
): Promise<{ deploy: Deployment; target: AttestTarget; stored: Stored }> {
  const t0 = Date.now();
  // the chain the transactions service asks (x402 verify, the chain watcher): fixed answers, see chain-stub.ts
  const chain = await startChainStub();
  onCleanup(() => chain.close());
  let deploy: Deployment;
  if (mode === 'embedded') {
    deploy = await startEmbedded(pinning, logDir, options.logLevel, chain.url);
  } else {
    const databaseUrl = await recreateDatabase(options.postgresUrl, databaseName);
    onCleanup(() => dropDatabase(options.postgresUrl, databaseName));
    const redis = await startRedis();
    onCleanup(() => redis.stop());
    deploy = await startReal(pinning, logDir, databaseUrl, redis.url, options.logLevel, chain.url);
  }
  onCleanup(() => deploy.stop());
  log(`  started in ${elapsed(t0)}`);
  const basics = await seedAttest(deploy);
  const stored: Stored = { transactions: NaN, quotes: NaN, users: NaN, apps: NaN, sessions: NaN };
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
      const identity = bulk.growth.identity;
      const t2 = Date.now();
      Object.assign(
        stored,
        await deploy.withDatabase('identity', async (db) => {
          await insertIdentityRows(db, identity);
          await settle(db, 'users', 'apps', 'sessions');
          return {
            users: await countRows(db, 'users'),
            apps: await countRows(db, 'apps'),
            sessions: await countRows(db, 'sessions'),
          };
        }),
      );
      log(`  identity rows inserted in ${elapsed(t2)}`);
    }
    // the bulk load's writes leave the kernel's page cache before anything is measured: a writeback
    // during a measurement would slow the servers' own writes (their request log) and blame it on them
    execFileSync('sync');
    log(
      `  bulk rows inserted in ${elapsed(t1)}: ${stored.transactions} transactions${bulk.growth ? `, ${stored.quotes} quotes, ${stored.users} users, ${stored.apps} apps, ${stored.sessions} sessions` : ''} stored`,
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
  // the stream fan-out is a row of its own (not a request rate): run with every scenario, or with --scenario stream
  const streamWanted = !options.growthOnly && (!options.scenarios.length || options.scenarios.includes('stream'));
  const requestFilters = options.scenarios.filter((f) => f !== 'stream');
  const chosen =
    options.growthOnly || (options.scenarios.length && !requestFilters.length) ? [] : selectScenarios(requestFilters);
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
  let httpFloor: Measurement | undefined;
  // both floors stay up: rows with a floor target measure them again in turn with themselves
  let floorPeer: FloorPeer | undefined;
  let httpFloorPeer: FloorPeer | undefined;
  if (needsFloor || options.growth) {
    log('\nExpress 5 hello world (the framework floor)');
    const peer = await startFloor(pinning, logDir, 'express');
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
      floorPeer = peer;
      log('\nExpress 5 hello world on Node’s own request and response classes (as Attest’s apps are)');
      const variant = await startFloor(pinning, logDir, 'express-node-classes');
      const stopVariant = onCleanup(() => variant.stop());
      const m = await timed('GET / → hello', floorWorkload(variant.origin), drive);
      await stopVariant();
      notes.push(
        `Express hello world on Node's own request and response classes, Express's methods on their prototypes, as Attest's apps are: ${fmt(m.rate)}/s, p99 ${fmt(m.p99, 2)} ms${m.errors ? `, ${fmt(m.errors)} errors` : ''} (the floor, stock \`app.listen\`: ${fmt(floor.rate)}/s)`,
      );
    }
  }
  if (rows.length) {
    // every row is shown against Node's own floor too (issue #28)
    log("\nNode's plain http hello world (Node's floor)");
    httpFloorPeer = await startFloor(pinning, logDir, 'http');
    const peer = httpFloorPeer;
    onCleanup(() => peer.stop());
    httpFloor = await timed('GET / → hello', floorWorkload(peer.origin), drive);
    memory.push({
      mode: 'reference',
      process: 'node http hello world',
      when: 'after its load',
      mb: mb(rss(peer.server.nodePid())),
    });
  }

  // oidc-provider's in-memory adapter keeps 1,000 entries (an LRU): the round trip's thousands of grants
  // would evict the token that /introspect and /userinfo use, so the round trips (plain and PAR, and the
  // refresh-token rotation: a new refresh token stored per request) run last
  const roundTrip = (s: Scenario) => s.key === 'signin' || s.key === 'par' || s.key === 'refresh';
  const roundTripsLast = <T>(list: T[], of: (x: T) => Scenario) => [
    ...list.filter((x) => !roundTrip(of(x))),
    ...list.filter((x) => roundTrip(of(x))),
  ];
  // Rows with an oidc-provider target measure it in turn with Attest, in each mode (below), so that each
  // ratio compares figures of the same minutes; the others (discovery, JWKS) show it measured once here.
  const inTurnWithPeer = (s: Scenario, mode: Mode) => !!s.oidc && s[mode].reference === 'oidc-provider';
  const oncePeer = withPeer.filter((s) => !modes.some((mode) => inTurnWithPeer(s, mode)));
  // oidc-provider's memory after its first load, once in the report
  let peerMemoryRead = false;
  const readPeerMemory = (peer: { server: { nodePid: () => number } }) => {
    if (peerMemoryRead) return;
    peerMemoryRead = true;
    memory.push({
      mode: 'reference',
      process: 'oidc-provider',
      when: 'after its load',
      mb: mb(rss(peer.server.nodePid())),
    });
  };
  if (oncePeer.length) {
    log('\noidc-provider 9.13.3');
    const peer = await startOidcPeer(pinning, logDir);
    const stop = onCleanup(() => peer.stop());
    for (const s of roundTripsLast(oncePeer, (x) => x))
      rows.find((r) => r.scenario === s)!.oidc = await timed(s.name, s.oidc(peer), drive);
    readPeerMemory(peer);
    await stop();
  }

  for (const mode of modes) {
    if (!rows.length && !streamWanted && !(mode === 'real' && options.memory)) continue;
    log(`\nAttest, ${mode === 'embedded' ? 'embedded (pnpm start)' : 'Postgres + Redis (one process per service)'}`);
    const mark = cleanups.length;
    const missSet =
      chosen.some((s) => s.key === 'tx-miss') || (mode === 'real' && options.memory) ? options.missSet : undefined;
    const { deploy, target } = await deployAttest(mode, options, pinning, logDir, { missSet });
    if (mode === 'embedded') {
      // idle: started, seeded, then left alone; every process of pnpm start added up
      await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
      const [server] = deploy.servers();
      const idle = serverMemory(server);
      memory.push({
        mode,
        process: 'pnpm start (every process)',
        when: `idle, ${IDLE_SETTLE_MS / 1000} s after start-up and seeding`,
        mb: mb(judgedBytes(idle)),
        rssMb: mb(idle.rss),
        limitMb: EMBEDDED_IDLE_LIMIT_MB,
      });
      notes.push(`embedded: pnpm start idle, PSS (RSS) of each process: ${describeProcesses(eachMb(idle.each))}`);
    }
    // a fresh oidc-provider per mode (its LRU and its token as new as Attest's), pinned alike, idle while Attest runs
    const peer = rows.some((r) => inTurnWithPeer(r.scenario, mode))
      ? await (async () => {
          log(`  oidc-provider 9.13.3, measured in turn with the rows that are compared with it`);
          const started = await startOidcPeer(pinning, logDir);
          onCleanup(() => started.stop());
          return started;
        })()
      : undefined;
    const watch = new MemoryWatch(deploy.servers());
    for (const row of roundTripsLast(rows, (r) => r.scenario)) {
      watch.segment(row.scenario.name);
      let m: Measurement;
      const spec = row.scenario[mode];
      if (peer && row.scenario.oidc && inTurnWithPeer(row.scenario, mode)) {
        const [o, a] = await timedInterleaved(
          row.scenario.name,
          [
            { label: 'oidc-provider', work: row.scenario.oidc(peer) },
            { label: 'Attest', work: row.scenario.attest(target) },
          ],
          drive,
        );
        (row.oidcInTurn ??= {})[mode] = o;
        m = a;
      } else if (
        floorPeer &&
        httpFloorPeer &&
        ((spec.reference === 'floor' && spec.minRatio !== undefined) || spec.minHttpRatio !== undefined)
      ) {
        // measured in turn with both floors, so that each ratio compares figures of the same minutes
        const [f, h, a] = await timedInterleaved(
          row.scenario.name,
          [
            { label: 'Express floor', work: floorWorkload(floorPeer.origin) },
            { label: 'http floor', work: floorWorkload(httpFloorPeer.origin) },
            { label: 'Attest', work: row.scenario.attest(target) },
          ],
          drive,
        );
        (row.floor ??= {})[mode] = f;
        (row.httpFloor ??= {})[mode] = h;
        m = a;
      } else m = await timed(row.scenario.name, row.scenario.attest(target), drive);
      row[mode] = m;
      log(`    memory: peak ${fmt(watch.segmentPeakMb(), 1)} MB during this row`);
      if (row.scenario.key === 'tx-miss') {
        row.notes.push(
          `${mode}: ${options.missSet.toLocaleString('en-US')} distinct pending transactions looked up in turn; at the measured rate one cycle takes ${(options.missSet / Math.max(1, m.rate)).toFixed(1)} s`,
        );
      }
    }
    // the soak before the fan-out: it measures its own load, not the 10,000 closed streams' garbage, which
    // V8 keeps until its next major GC (read apart below, 5 s after the streams close)
    if (mode === 'real' && options.memory) {
      log(`  memory soak: ${options.memorySeconds} s`);
      memory.push(...(await soak(deploy, target, options)));
    }
    if (streamWanted) {
      watch.segment('stream fan-out');
      log(`  stream fan-out: ${STREAM_SUBSCRIBERS.toLocaleString('en-US')} subscribers`);
      const prices = deploy.servers().find((s) => s.name.includes('prices')) ?? deploy.servers()[0];
      const measured = mode === 'embedded' ? 'pnpm start (every process)' : prices.name;
      let open: ReturnType<typeof serverMemory> | undefined;
      const fan = await streamFanOut(
        target.origins.prices,
        STREAM_SUBSCRIBERS,
        () => setPrice(deploy, `1.${String(Date.now()).slice(-6)}`),
        () => void (open = serverMemory(prices)),
      );
      const openMb = mb(open && judgedBytes(open));
      memory.push({
        mode,
        process: measured,
        when: `with ${fan.connected.toLocaleString('en-US')} price streams open`,
        mb: openMb,
        rssMb: mb(open?.rss),
      });
      notes.push(
        `${mode}: stream fan-out: ${fan.connected.toLocaleString('en-US')} of ${fan.subscribers.toLocaleString('en-US')} subscribers connected; ` +
          `a price change (timed from starting pnpm manage price set, its start-up included) reached the first in ${fmt(fan.firstMs)} ms, half in ${fmt(fan.medianMs)} ms, all in ${fmt(fan.lastMs)} ms` +
          `${fan.missed ? `; ${fan.missed} never saw it` : ''} (bound: ${STREAM_BOUND_MS} ms)` +
          (fan.missed || !(fan.lastMs <= STREAM_BOUND_MS) ? ' — NOT MET' : ' — met'),
      );
      log(`  → all ${fan.connected} in ${fmt(fan.lastMs)} ms; ${fmt(openMb)} MB with the streams open`);
      await new Promise((r) => setTimeout(r, STREAM_CLOSED_SETTLE_MS));
      const closed = serverMemory(prices);
      memory.push({
        mode,
        process: measured,
        when: `${STREAM_CLOSED_SETTLE_MS / 1000} s after the ${fan.connected.toLocaleString('en-US')} price streams closed`,
        mb: mb(judgedBytes(closed)),
        rssMb: mb(closed.rss),
      });
    }
    if (peer) readPeerMemory(peer);
    const readings = watch.stop();
    for (const r of readings) {
      if (mode === 'embedded') {
        memory.push({
          mode,
          process: 'pnpm start (every process)',
          when: 'peak over the embedded scenarios',
          mb: r.peakMb,
          rssMb: r.peakRssMb,
          limitMb: EMBEDDED_LIMIT_MB,
        });
        notes.push(`embedded: pnpm start at its peak, PSS (RSS) of each process: ${describeProcesses(r.atPeak)}`);
        notes.push(`embedded: pnpm start's peak during each row, in the order run: ${describeSegments(r.segments)}`);
      } else
        memory.push({ mode, process: r.process, when: 'peak over the scenarios', mb: r.peakMb, rssMb: r.peakRssMb });
    }
    await deploy.stop();
    await cleanupAll(mark);
  }
  await floorPeer?.stop();
  await httpFloorPeer?.stop();

  if (options.growth) {
    const sizes: GrowthSize[] = [
      GROWTH_SMALL,
      { transactions: options.growthLarge, quotes: options.growthLarge, identity: identityRows(options.growthLarge) },
    ];
    for (const mode of modes) {
      // Both sizes are deployed side by side and measured in turn (interleaved repetitions), so that the
      // only difference between the two figures is the number of stored rows, not the moment they ran.
      const deployed: {
        deploy: Deployment;
        target: AttestTarget;
        counted: Stored;
      }[] = [];
      for (const [i, size] of sizes.entries()) {
        log(
          `\nGrowth, ${mode}: ${size.transactions.toLocaleString('en-US')} transactions, ${size.quotes.toLocaleString('en-US')} extra quotes, ${size.identity.users.toLocaleString('en-US')} users, ${size.identity.apps.toLocaleString('en-US')} apps, ${size.identity.sessions.toLocaleString('en-US')} sessions`,
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
      // identity (issue #28): the same sign-in, token and session against more users, apps and sessions
      const identityMeasured: [string, Measurement[]][] = [];
      for (const key of ['signin', 'userinfo', 'introspect']) {
        const s = scenario(key);
        identityMeasured.push([
          key,
          await timedInterleaved(
            s.name,
            deployed.map((d, i) => ({ label: labels[i], work: s.attest(d.target) })),
            growthDrive,
          ),
        ]);
      }
      for (const d of deployed) await d.deploy.stop();
      await cleanupAll();
      const [small, large] = deployed.map((d) => d.counted);
      const identityStored = (c: Stored) => c.users + c.apps + c.sessions;
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
      const names: Record<string, string> = {
        signin: 'sign-in round trip (users, apps, sessions)',
        userinfo: 'GET /userinfo (users, apps, sessions)',
        introspect: 'POST /introspect (users, apps, sessions)',
      };
      for (const [key, [mSmall, mLarge]] of identityMeasured)
        growth.push({
          mode,
          scenario: names[key],
          smallRows: identityStored(small),
          largeRows: identityStored(large),
          small: mSmall,
          large: mLarge,
        });
      notes.push(
        `growth, ${mode}: identity rows stored (users / apps / sessions): small ${[small.users, small.apps, small.sessions].map((n) => fmt(n)).join(' / ')}, large ${[large.users, large.apps, large.sessions].map((n) => fmt(n)).join(' / ')}`,
      );
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
    httpFloor,
    rows,
    memory,
    growth,
    notes: [...notes, `total time ${elapsed(t0)}`],
  };
  const errors = [
    floor,
    httpFloor,
    ...rows.flatMap((r) => [
      r.embedded,
      r.real,
      r.oidc,
      r.floor?.embedded,
      r.floor?.real,
      r.httpFloor?.embedded,
      r.httpFloor?.real,
    ]),
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
