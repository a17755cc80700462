/**
 * Resident memory of server processes: sampled every second while they run, and read at given moments.
 * A server's memory is the sum over every process of it (for `pnpm start`: pnpm, the program, and any
 * child such as tsx's esbuild service), both as PSS (what the target is judged on: a page shared by
 * two of its processes, such as the node binary's, counts once) and as RSS (such pages count in each).
 */
import fs from 'node:fs';
import { mb, residentMemory } from './system';
import type { ServerProcess } from './server';

export interface MemoryReading {
  process: string;
  /** MB, the largest PSS sum seen while watched (the RSS sum where PSS is not available). */
  peakMb?: number;
  /** MB, the largest RSS sum seen while watched. */
  peakRssMb?: number;
  /** MB, the last sums. */
  lastMb?: number;
  lastRssMb?: number;
  /** Each process at the PSS peak: its command, PSS and RSS in MB. */
  atPeak: { command: string; mb?: number; rssMb?: number }[];
  /** The largest PSS sum (MB) seen during each segment named with `MemoryWatch.segment`, in order. */
  segments: { label: string; peakMb?: number }[];
}

export interface ProcessMemory {
  command: string;
  /** bytes */
  rss: number;
  pss?: number;
}

export interface ServerMemory {
  /** bytes, summed over the server's processes; pss only when every process had it */
  rss?: number;
  pss?: number;
  each: ProcessMemory[];
}

/** The summed PSS and RSS of every process of a server, and each process's share, now. */
export function serverMemory(server: ServerProcess): ServerMemory {
  const each: ProcessMemory[] = [];
  for (const pid of server.pids()) {
    const m = residentMemory(pid);
    if (m) each.push({ command: command(pid), ...m });
  }
  if (!each.length) return { each };
  const rss = each.reduce((sum, p) => sum + p.rss, 0);
  const pss = each.every((p) => p.pss !== undefined) ? each.reduce((sum, p) => sum + p.pss!, 0) : undefined;
  return { rss, pss, each };
}

/** What a target is judged on: the PSS sum, or the RSS sum where PSS is not available. */
export const judgedBytes = (m: ServerMemory) => m.pss ?? m.rss;

/** `pnpm start`'s processes as one line: "node pnpm start 50.4 MB (RSS 91.9) + …". */
export const describeProcesses = (each: { command: string; mb?: number; rssMb?: number }[]) =>
  each.map((p) => `${p.command} ${p.mb?.toFixed(1) ?? '—'} MB (RSS ${p.rssMb?.toFixed(1) ?? '—'})`).join(' + ');

/** Each segment's peak as one line: "sign-in 312.4 MB, PAR 318.0 MB, …". */
export const describeSegments = (segments: { label: string; peakMb?: number }[]) =>
  segments.map((s) => `${s.label} ${s.peakMb?.toFixed(1) ?? '—'} MB`).join(', ');

export const eachMb = (each: ProcessMemory[]) =>
  each.map((p) => ({ command: p.command, mb: mb(p.pss ?? p.rss), rssMb: mb(p.rss) }));

function command(pid: number): string {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return argv
      .slice(0, 4)
      .map((a) => a.replace(/^.*\/(?=[^/]+$)/, ''))
      .join(' ');
  } catch {
    return '?';
  }
}

export class MemoryWatch {
  private readonly peak = new Map<ServerProcess, { bytes: number; each: ProcessMemory[] }>();
  private readonly peakRss = new Map<ServerProcess, number>();
  private readonly last = new Map<ServerProcess, ServerMemory>();
  /** Per server, the peak of each segment (a bench row), so that a peak over the run can be traced to a row. */
  private readonly segments = new Map<ServerProcess, { label: string; bytes: number }[]>();
  private label: string | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly servers: ServerProcess[]) {
    this.timer = setInterval(() => this.sample(), 1000);
    this.timer.unref();
    this.sample();
  }

  sample(): void {
    for (const server of this.servers) {
      const now = serverMemory(server);
      const bytes = judgedBytes(now);
      if (bytes === undefined) continue;
      this.last.set(server, now);
      if (bytes > (this.peak.get(server)?.bytes ?? 0)) this.peak.set(server, { bytes, each: now.each });
      const current = this.label === undefined ? undefined : this.segments.get(server)?.at(-1);
      if (current && bytes > current.bytes) current.bytes = bytes;
      if (now.rss! > (this.peakRss.get(server) ?? 0)) this.peakRss.set(server, now.rss!);
    }
  }

  /** Starts a segment named `label` (a row): samples now, so that the memory it starts from counts in it. */
  segment(label: string): void {
    this.label = label;
    for (const server of this.servers) {
      const list = this.segments.get(server) ?? [];
      list.push({ label, bytes: 0 });
      this.segments.set(server, list);
    }
    this.sample();
  }

  /** MB, the peak of the segment under way, summed over every watched server. */
  segmentPeakMb(): number | undefined {
    this.sample();
    let sum = 0;
    for (const server of this.servers) sum += this.segments.get(server)?.at(-1)?.bytes ?? 0;
    return mb(sum || undefined);
  }

  readings(): MemoryReading[] {
    this.sample();
    return this.servers.map((server) => {
      const last = this.last.get(server);
      return {
        process: server.name,
        peakMb: mb(this.peak.get(server)?.bytes),
        peakRssMb: mb(this.peakRss.get(server)),
        lastMb: mb(last && judgedBytes(last)),
        lastRssMb: mb(last?.rss),
        atPeak: eachMb(this.peak.get(server)?.each ?? []),
        segments: (this.segments.get(server) ?? []).map((s) => ({ label: s.label, peakMb: mb(s.bytes || undefined) })),
      };
    });
  }

  stop(): MemoryReading[] {
    const out = this.readings();
    clearInterval(this.timer);
    return out;
  }
}
