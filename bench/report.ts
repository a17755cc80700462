/** Targets of issue #10 checked against the measured figures, and the report as Markdown and JSON. */
import fs from 'node:fs';
import path from 'node:path';
import type { Measurement } from './drive';
import type { BenchOptions } from './options';
import type { Reference, Scenario } from './scenarios';
import type { Machine } from './system';

export interface ScenarioRow {
  scenario: Scenario;
  embedded?: Measurement;
  real?: Measurement;
  /** oidc-provider measured once, before the modes (rows whose targets are not against it). */
  oidc?: Measurement;
  /** oidc-provider measured in turn with this row (rows with an oidc-provider target), per mode. */
  oidcInTurn?: { embedded?: Measurement; real?: Measurement };
  /** The Express floor measured in turn with this row (rows with a floor target), per mode. */
  floor?: { embedded?: Measurement; real?: Measurement };
  /** Node's `http` floor measured in turn with this row (the same rows), per mode. */
  httpFloor?: { embedded?: Measurement; real?: Measurement };
  notes: string[];
}

export interface MemoryRow {
  mode: 'embedded' | 'real' | 'reference';
  process: string;
  /** What was measured, e.g. "peak over all embedded scenarios". */
  when: string;
  /**
   * MB: the sum of PSS over the server's processes (what the embedded targets are judged on), or RSS
   * where there is no PSS (a reference's single process, read as RSS).
   */
  mb?: number;
  /** MB: the sum of RSS over the same processes (pages shared by two of them counted twice). */
  rssMb?: number;
  /** Real-server soak: RSS at half time and at the end of the soak. */
  atHalfMb?: number;
  atEndMb?: number;
  limitMb?: number;
}

export interface GrowthRow {
  mode: 'embedded' | 'real';
  scenario: string;
  smallRows: number;
  largeRows: number;
  small: Measurement;
  large: Measurement;
}

export interface Verdict {
  what: string;
  measured: string;
  target: string;
  met: boolean;
}

export interface Report {
  startedAt: string;
  finishedAt: string;
  commit: string;
  command: string;
  machine: Machine;
  pinning: string;
  options: BenchOptions;
  /** How the real-server rows ran each service (build output and the image's NODE_OPTIONS). */
  realCommand?: string;
  /** The Express floor measured alone, first. */
  floor?: Measurement;
  /** Node's plain `http` hello world measured alone, first (issue #28). */
  httpFloor?: Measurement;
  rows: ScenarioRow[];
  memory: MemoryRow[];
  growth: GrowthRow[];
  verdicts: Verdict[];
  notes: string[];
}

export const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || !Number.isFinite(n)
    ? '—'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ratio = (a: Measurement | undefined, b: Measurement | undefined) =>
  a && b && b.rate > 0 ? a.rate / b.rate : undefined;

/** What a row is compared with in a mode: the floor measured in turn with it (else the run's first floor), or oidc-provider (in turn with it, else measured once). */
function referenceOf(
  row: ScenarioRow,
  floor: Measurement | undefined,
  reference: Reference,
  mode: 'embedded' | 'real',
): Measurement | undefined {
  return reference === 'floor'
    ? (row.floor?.[mode] ?? floor)
    : reference === 'oidc-provider'
      ? (row.oidcInTurn?.[mode] ?? row.oidc)
      : undefined;
}

/** Node's `http` floor of a row in a mode: measured in turn with it, else the run's first. */
const httpFloorOf = (row: ScenarioRow, httpFloor: Measurement | undefined, mode: 'embedded' | 'real') =>
  row.httpFloor?.[mode] ?? httpFloor;

const modeName = (mode: 'embedded' | 'real') => (mode === 'embedded' ? 'embedded' : 'Postgres + Redis');
const httpVerdictName = (key: string, mode: 'embedded' | 'real') => `${key} vs http floor (${modeName(mode)})`;

const refName = (r: Reference) => (r === 'floor' ? 'floor' : 'oidc-provider');

/** One verdict per target whose figures were measured in this run. */
export function evaluate(report: Omit<Report, 'verdicts'>): Verdict[] {
  const verdicts: Verdict[] = [];
  for (const row of report.rows) {
    for (const mode of ['embedded', 'real'] as const) {
      const m = row[mode];
      const spec = row.scenario[mode];
      if (!m || spec.minRatio === undefined) continue;
      const ref = referenceOf(row, report.floor, spec.reference, mode);
      const r = ratio(m, ref);
      if (r === undefined) continue;
      const p99ok =
        mode === 'embedded' && row.scenario.embedded.maxP99Ms !== undefined
          ? m.p99 <= row.scenario.embedded.maxP99Ms
          : true;
      const target = `≥ ${spec.minRatio} × ${refName(spec.reference)}${mode === 'embedded' && row.scenario.embedded.maxP99Ms !== undefined ? `, p99 ≤ ${row.scenario.embedded.maxP99Ms} ms` : ''}`;
      const clean = m.errors === 0 && (ref?.errors ?? 0) === 0;
      verdicts.push({
        what: `${row.scenario.key} (${mode === 'embedded' ? 'embedded' : 'Postgres + Redis'})`,
        measured: `${r.toFixed(2)}×${mode === 'embedded' && row.scenario.embedded.maxP99Ms !== undefined ? `, p99 ${fmt(m.p99, 2)} ms` : ''}${clean ? '' : `, ${m.errors + (ref?.errors ?? 0)} errors`}`,
        target,
        met: clean && r >= spec.minRatio && p99ok,
      });
    }
    const minRate = row.scenario.embedded.minRate;
    if (row.embedded && minRate !== undefined)
      verdicts.push({
        what: `${row.scenario.key} (embedded)`,
        measured: `${fmt(row.embedded.rate)}/s${row.embedded.errors ? `, ${row.embedded.errors} errors` : ''}`,
        target: `≥ ${fmt(minRate)}/s`,
        met: row.embedded.errors === 0 && row.embedded.rate >= minRate,
      });
    for (const mode of ['embedded', 'real'] as const) {
      const m = row[mode];
      const min = row.scenario[mode].minHttpRatio;
      const ref = httpFloorOf(row, report.httpFloor, mode);
      const r = ratio(m, ref);
      if (!m || min === undefined || r === undefined) continue;
      const clean = m.errors === 0 && (ref?.errors ?? 0) === 0;
      verdicts.push({
        what: httpVerdictName(row.scenario.key, mode),
        measured: `${r.toFixed(2)}× (${fmt(m.rate)} vs ${fmt(ref?.rate)}/s)${clean ? '' : `, ${m.errors + (ref?.errors ?? 0)} errors`}`,
        target: `≥ ${min} × http floor`,
        met: clean && r >= min,
      });
    }
  }
  for (const mem of report.memory) {
    if (mem.limitMb === undefined) continue;
    if (mem.mode === 'embedded' && mem.mb !== undefined) {
      verdicts.push({
        what: `memory: ${mem.process} (embedded)`,
        measured: `${fmt(mem.mb, 1)} MB PSS${mem.rssMb !== undefined ? ` (RSS ${fmt(mem.rssMb, 1)} MB)` : ''}`,
        target: `≤ ${mem.limitMb} MB`,
        met: mem.mb <= mem.limitMb,
      });
    }
    if (mem.mode === 'real' && mem.atEndMb !== undefined && mem.atHalfMb !== undefined) {
      const flat = mem.atEndMb <= mem.atHalfMb * 1.1;
      verdicts.push({
        what: `memory: ${mem.process} (Postgres + Redis, soak)`,
        measured: `${fmt(mem.atHalfMb, 1)} → ${fmt(mem.atEndMb, 1)} MB`,
        target: `≤ ${mem.limitMb} MB, flat (≤ +10 %)`,
        met: mem.atEndMb <= mem.limitMb && flat,
      });
    }
  }
  for (const g of report.growth) {
    const r = g.large.rate / g.small.rate;
    const clean = g.small.errors === 0 && g.large.errors === 0;
    verdicts.push({
      what: `growth: ${g.scenario} (${g.mode === 'embedded' ? 'embedded' : 'Postgres + Redis'})`,
      measured: `${r.toFixed(2)}× (${fmt(g.largeRows)} vs ${fmt(g.smallRows)} rows)${clean ? '' : ', errors'}`,
      target: '≥ 0.90× (within 10 %)',
      met: clean && r >= 0.9,
    });
  }
  return verdicts;
}

function cell(m: Measurement | undefined, unit: string): string {
  if (!m) return '—';
  return m.errors ? `${fmt(m.rate)} ⚠ ${fmt(m.errors)} errors` : `${fmt(m.rate)}${unit}`;
}

function verdictFor(report: Report, key: string, mode: 'embedded' | 'real', http = false): string {
  const what = http ? httpVerdictName(key, mode) : `${key} (${modeName(mode)})`;
  const v = report.verdicts.find((x) => x.what === what);
  return v ? (v.met ? 'yes' : '**no**') : '';
}

/** A row against Node's floor in a mode: the ratio, and the floor's figure when it was measured in turn with the row. */
function httpCell(row: ScenarioRow, report: Report, mode: 'embedded' | 'real'): string {
  const m = row[mode];
  const r = row.scenario.unit === 'trip' ? undefined : ratio(m, httpFloorOf(row, report.httpFloor, mode));
  if (r === undefined) return '';
  const inTurn = mode === 'real' ? row.httpFloor?.real : undefined;
  const target = row.scenario[mode].minHttpRatio;
  return `${r.toFixed(2)}×${inTurn ? ` (floor ${fmt(inTurn.rate)})` : ''}${target !== undefined ? ` (≥ ${target}×: ${verdictFor(report, row.scenario.key, mode, true)})` : ''}`;
}

export function markdown(report: Report): string {
  const o = report.options;
  const lines: string[] = [];
  const met = report.verdicts.filter((v) => v.met).length;
  lines.push(`# Attest benchmark — ${report.startedAt}`, '');
  lines.push(`- command: \`${report.command}\`; commit ${report.commit}`);
  lines.push(
    `- machine: ${report.machine.cpus} × ${report.machine.cpu}, ${report.machine.memory} RAM, ${report.machine.os}, Node ${report.machine.node}`,
  );
  lines.push(`- lscpu: ${report.machine.lscpu}`);
  lines.push(`- pinning: ${report.pinning}`);
  lines.push(
    `- load: autocannon, ${o.connections} connections, ${o.warmupSeconds} s warm-up (not counted) + ${o.seconds} s measured, median of ${o.repetitions} repetition${o.repetitions === 1 ? '' : 's'}; loopback only; only correct responses count`,
  );
  if (!o.realOnly)
    lines.push(
      `- Attest embedded: \`pnpm start\` (pnpm, and its program in one node process), PGlite + in-process cache, LOG_LEVEL ${o.logLevel ?? 'default (info)'}, logs to a file`,
    );
  if (report.rows.some((r) => r.real) || report.memory.some((m) => m.mode === 'real'))
    lines.push(
      `- Attest on Postgres + Redis: three processes (\`${report.realCommand ?? 'node services/<name>/dist/main.js'}\`, as the images run them), database \`${o.databaseName}\` on ${o.postgresUrl.replace(/\/[^/]*$/, '')}, a throwaway redis-server; the three services pinned to the server core, Postgres (a shared server) and redis-server not pinned`,
    );
  lines.push(
    `- references: Express ${'5'} hello world (the floor), Node's plain \`http\` hello world (the http floor: same body, same load, pinned alike), oidc-provider 9.13.3 (in-memory adapter, RS256, pairwise, JWT access tokens for a resource indicator, ES256 as the bench resource chose in ours, introspection, DPoP)`,
  );
  if (report.rows.some((r) => r.floor))
    lines.push(
      '- a row with a floor target is measured in turn with both floors (Express floor, http floor, Attest; Attest, http floor, Express floor; …, each with its own warm-up) and compared with those, shown in its row; other rows show the floors measured first',
      '- a row with an oidc-provider target is measured in turn with oidc-provider in each mode (a fresh one per mode); Postgres + Redis: its figure in brackets after the ratio',
    );
  lines.push('', `**targets met: ${met} of ${report.verdicts.length}**`, '');
  lines.push(
    '| scenario | Attest embedded /s | p99 ms | errors | oidc-provider /s | Express floor /s | ratio | target | met? | http floor /s | × http floor | Attest Postgres+Redis /s | p99 ms | errors | ratio | target | met? | × http floor |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|');
  for (const row of report.rows) {
    const s = row.scenario;
    const unit = s.unit === 'trip' ? ' trips' : '';
    const eRef = referenceOf(row, report.floor, s.embedded.reference, 'embedded');
    const rRef = referenceOf(row, report.floor, s.real.reference, 'real');
    const eRatio = ratio(row.embedded, eRef);
    const rRatio = ratio(row.real, rRef);
    const eTarget =
      s.embedded.minRatio !== undefined
        ? `≥ ${s.embedded.minRatio}× ${refName(s.embedded.reference)}${s.embedded.maxP99Ms !== undefined ? `, p99 ≤ ${s.embedded.maxP99Ms}` : ''}`
        : s.embedded.minRate !== undefined
          ? `≥ ${fmt(s.embedded.minRate)}/s`
          : '';
    const rTarget = s.real.minRatio !== undefined ? `≥ ${s.real.minRatio}× ${refName(s.real.reference)}` : '';
    lines.push(
      `| ${s.name} | ${cell(row.embedded, unit)} | ${fmt(row.embedded?.p99, 2)} | ${fmt(row.embedded?.errors)} | ${cell(row.oidcInTurn?.embedded ?? row.oidc, unit)} | ${s.unit === 'trip' ? '' : cell(row.floor?.embedded ?? report.floor, '')} | ${eRatio === undefined ? '' : `${eRatio.toFixed(2)}× ${refName(s.embedded.reference === 'none' ? 'floor' : s.embedded.reference)}`} | ${eTarget} | ${verdictFor(report, s.key, 'embedded')} | ${s.unit === 'trip' ? '' : cell(row.httpFloor?.embedded ?? report.httpFloor, '')} | ${httpCell(row, report, 'embedded')} | ${cell(row.real, unit)} | ${fmt(row.real?.p99, 2)} | ${fmt(row.real?.errors)} | ${rRatio === undefined ? '' : `${rRatio.toFixed(2)}×${row.floor?.real ? ` (floor ${fmt(row.floor.real.rate)})` : ''}${row.oidcInTurn?.real ? ` (oidc-provider ${fmt(row.oidcInTurn.real.rate)})` : ''}`} | ${rTarget} | ${verdictFor(report, s.key, 'real')} | ${httpCell(row, report, 'real')} |`,
    );
  }
  const noted = report.rows.filter((r) => r.notes.length);
  if (noted.length) {
    lines.push('');
    for (const r of noted) lines.push(`- ${r.scenario.key}: ${r.notes.join('; ')}`);
  }
  const measured: [string, string, Measurement | undefined][] = [
    ...report.rows.flatMap((r): [string, string, Measurement | undefined][] => [
      ['Attest embedded', r.scenario.key, r.embedded],
      ['Attest Postgres+Redis', r.scenario.key, r.real],
      ['oidc-provider', r.scenario.key, r.oidc],
      ['oidc-provider (in turn, embedded)', r.scenario.key, r.oidcInTurn?.embedded],
      ['oidc-provider (in turn, Postgres+Redis)', r.scenario.key, r.oidcInTurn?.real],
      ['Express floor (in turn, embedded)', r.scenario.key, r.floor?.embedded],
      ['Express floor (in turn, Postgres+Redis)', r.scenario.key, r.floor?.real],
      ['http floor (in turn, embedded)', r.scenario.key, r.httpFloor?.embedded],
      ['http floor (in turn, Postgres+Redis)', r.scenario.key, r.httpFloor?.real],
    ]),
    ['Express floor', 'hello', report.floor],
    ['http floor', 'hello', report.httpFloor],
  ];
  const errored = measured.filter((x): x is [string, string, Measurement] => !!x[2] && x[2].errors > 0);
  if (errored.length) {
    lines.push('', '### Errors (not counted as throughput)', '');
    for (const [who, key, m] of errored)
      lines.push(
        `- ${who} ${key}: ${Object.entries(m.errorKinds)
          .map(([k, n]) => `${k} × ${n}`)
          .join(', ')}; e.g. \`${(m.errorSample ?? '').replace(/`/g, "'")}\``,
      );
  }
  if (report.memory.length) {
    lines.push(
      '',
      '### Memory (every process of pnpm start added up; each service process on Postgres + Redis)',
      '',
      "PSS (proportional set size, /proc/PID/smaps_rollup, as `smem` reports it) counts a page that several processes map once in all; RSS counts it in each. pnpm and its program both map the node binary, so the RSS sum counts it twice: the limits apply to the PSS sum. On a busy machine PSS also shares file pages with other people's node processes and reads lower than it would on a quiet one. References and the soak read RSS.",
      '',
    );
    lines.push(
      '| mode | process | when | PSS MB | RSS MB | soak: half-time RSS MB | soak: end RSS MB | limit MB |',
      '|---|---|---|---:|---:|---:|---:|---:|',
    );
    for (const m of report.memory)
      lines.push(
        `| ${m.mode} | ${m.process} | ${m.when} | ${m.mode === 'reference' ? '' : fmt(m.mb, 1)} | ${fmt(m.mode === 'reference' ? m.mb : m.rssMb, 1)} | ${fmt(m.atHalfMb, 1)} | ${fmt(m.atEndMb, 1)} | ${m.limitMb ?? ''} |`,
      );
  }
  if (report.growth.length) {
    lines.push('', '### Growth (same lookup, more stored rows)', '');
    lines.push(
      `Both sizes deployed side by side and measured in turn: median of ${o.growthRepetitions} interleaved repetitions each (small, large; large, small; …).`,
      '',
    );
    lines.push(
      '| mode | scenario | small rows | /s | p99 ms | large rows | /s | p99 ms | ratio |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const g of report.growth)
      lines.push(
        `| ${g.mode} | ${g.scenario} | ${fmt(g.smallRows)} | ${cell(g.small, '')} | ${fmt(g.small.p99, 2)} | ${fmt(g.largeRows)} | ${cell(g.large, '')} | ${fmt(g.large.p99, 2)} | ${(g.large.rate / g.small.rate).toFixed(2)}× |`,
      );
  }
  lines.push('', '### Targets', '', '| what | measured | target | met? |', '|---|---|---|---|');
  for (const v of report.verdicts)
    lines.push(`| ${v.what} | ${v.measured} | ${v.target} | ${v.met ? 'yes' : '**no**'} |`);
  lines.push('', `**targets met: ${met} of ${report.verdicts.length}**`);
  if (report.notes.length) lines.push('', ...report.notes.map((n) => `- ${n}`));
  lines.push('', `Finished ${report.finishedAt}.`, '');
  return lines.join('\n');
}

/** bench/results/<timestamp>.md and .json, and latest.md. */
export function writeReport(report: Report, dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true });
  const stamp = report.startedAt.replace(/[:]/g, '-').replace(/\.\d+Z$/, 'Z');
  const md = markdown(report);
  const json = JSON.stringify(
    {
      ...report,
      rows: report.rows.map((r) => ({
        ...r,
        scenario: {
          key: r.scenario.key,
          name: r.scenario.name,
          unit: r.scenario.unit,
          embedded: r.scenario.embedded,
          real: r.scenario.real,
        },
      })),
    },
    null,
    2,
  );
  const files = [path.join(dir, `${stamp}.md`), path.join(dir, `${stamp}.json`), path.join(dir, 'latest.md')];
  fs.writeFileSync(files[0], md);
  fs.writeFileSync(files[1], `${json}\n`);
  fs.writeFileSync(files[2], md);
  return files;
}
