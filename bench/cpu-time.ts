/**
 * The server's CPU time per correct answer: Attest embedded against oidc-provider for rows with an
 * oidc-provider reference, Attest alone for the others (e.g. x402-verify): utime + stime of each server's node
 * process (/proc/PID/stat) over a measured run, divided by its correct answers. A busy shared machine moves it far less than the rates (a server kept off
 * its core serves fewer answers, but each costs about the same), so it tells a change of the code from the
 * machine's noise. Each round: a 1-s warm-up, the row's set-up (e.g. the refresh row's new tokens, not
 * counted), 2 s idle (each server's CPU then, printed), then the measured run; the two servers in turn.
 *
 *   pnpm exec tsx bench/cpu-time.ts refresh client-credentials   # BENCH_CPU_ROUNDS (3), BENCH_CPU_SECONDS (4)
 *   pnpm exec tsx bench/cpu-time.ts payreq-create                # Attest alone
 *   pnpm exec tsx bench/cpu-time.ts x402-verify                   # Attest alone, with the bench's chain stub
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startChainStub } from './chain-stub';
import { runOnce, type Workload } from './drive';
import { startOidcPeer } from './peers/oidc-provider';
import { scenario } from './scenarios';
import { seedAttest, signIn } from './seed';
import { startEmbedded } from './stack';
import { pinDriver } from './system';

const CONNECTIONS = 32;
const TICK_MS = 1000 / 100; // USER_HZ

/** utime + stime of a process, in ms. */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const keys = process.argv.slice(2);
  if (!keys.length) throw new Error('usage: tsx bench/cpu-time.ts SCENARIO…');
  const rounds = Number(process.env.BENCH_CPU_ROUNDS ?? 3);
  const seconds = Number(process.env.BENCH_CPU_SECONDS ?? 4);
  const pinning = pinDriver();
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-bench-cpu-'));
  // the chain x402 verify asks, as in the bench (chain-stub.ts)
  const chain = await startChainStub();
  const deploy = await startEmbedded(pinning, logDir, undefined, chain.url);
  try {
    const basics = await seedAttest(deploy);
    const session = await signIn(deploy.origins.identity, deploy.env.BASE_URL!, basics.appId, basics.clientSecret);
    const target = {
      origins: deploy.origins,
      issuer: deploy.env.BASE_URL!,
      seed: { ...basics, ...session },
      missSet: 1,
      growthSet: 1,
    };
    const named = keys.map((key) => {
      const s = scenario(key);
      if (!s) throw new Error(`${key}: no such row`);
      return s;
    });
    // as bench/run.ts orders them: oidc-provider's in-memory adapter keeps 1,000 entries (an LRU), and the
    // round trips' grants and the refresh row's rotated tokens evict the grant behind the token-exchange row's
    // subject token (and the tokens of the other rows): run before them, its every answer was a 400
    const roundTrip = (key: string) => key === 'signin' || key === 'par' || key === 'refresh';
    const rows = [...named.filter((s) => !roundTrip(s.key)), ...named.filter((s) => roundTrip(s.key))];
    const peer = rows.some((s) => s.oidc) ? await startOidcPeer(pinning, logDir) : null;
    try {
      for (const s of rows) {
        const key = s.key;
        const sides: { label: string; work: Workload; pid: number; ms: number; answers: number; idle: number[] }[] = [
          { label: 'Attest', work: s.attest(target), pid: deploy.servers()[0].nodePid(), ms: 0, answers: 0, idle: [] },
        ];
        if (s.oidc && peer)
          sides.push({
            label: 'oidc-provider',
            work: s.oidc(peer),
            pid: peer.server.nodePid(),
            ms: 0,
            answers: 0,
            idle: [],
          });
        for (let r = 0; r < rounds; r++) {
          for (const side of r % 2 ? [...sides].reverse() : sides) {
            await runOnce(side.work, CONNECTIONS, 1);
            await side.work.beforeRun?.(CONNECTIONS);
            const idle = cpuMs(side.pid);
            await sleep(2000);
            side.idle.push((cpuMs(side.pid) - idle) / 2);
            const before = cpuMs(side.pid);
            const rpc = chain.counts();
            const m = await runOnce(side.work, CONNECTIONS, seconds);
            side.ms += cpuMs(side.pid) - before;
            const { calls, requests } = chain.counts();
            // the JSON-RPC calls the row made of the chain stub, and the HTTP requests that carried them
            if (calls > rpc.calls)
              process.stdout.write(
                `  ${key} ${side.label}: ${((calls - rpc.calls) / m.good).toFixed(2)} JSON-RPC calls per answer in ${((requests - rpc.requests) / m.good).toFixed(2)} requests\n`,
              );
            side.answers += m.good;
            process.stdout.write(
              `  ${key} ${side.label}: ${m.rate}/s, p99 ${m.p99} ms, ${((cpuMs(side.pid) - before) / Math.max(m.good, 1)).toFixed(2)} ms CPU per answer${m.errors ? `, ${m.errors} errors (${Object.keys(m.errorKinds).join(', ')})` : ''}\n`,
            );
          }
        }
        const [a, o] = sides.map((side) => side.ms / side.answers);
        const idle = sides.map((side) => `${side.label} ${Math.max(...side.idle)} ms/s`).join(', ');
        const versus = o === undefined ? '' : `, oidc-provider ${o.toFixed(2)} ms: ${(o / a).toFixed(2)}×`;
        process.stdout.write(
          `${key}: Attest ${a.toFixed(2)} ms CPU per answer${versus} (${sides[0].answers} answers; idle at most: ${idle})\n`,
        );
      }
    } finally {
      await peer?.stop();
    }
  } finally {
    await deploy.stop();
    await chain.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
