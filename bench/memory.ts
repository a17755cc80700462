/** Resident memory of server processes: sampled every second while they run, and read at given moments. */
import { mb, rss } from './system';
import type { ServerProcess } from './server';

export interface MemoryReading {
  process: string;
  pid: number;
  /** MB, the largest sample seen while watched. */
  peakMb?: number;
  /** MB, the last sample. */
  lastMb?: number;
}

export class MemoryWatch {
  private readonly peak = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly targets: { name: string; pid: number }[];

  constructor(servers: ServerProcess[]) {
    this.targets = servers.map((s) => ({ name: s.name, pid: s.nodePid() }));
    this.timer = setInterval(() => this.sample(), 1000);
    this.timer.unref();
    this.sample();
  }

  sample(): void {
    for (const { pid } of this.targets) {
      const bytes = rss(pid);
      if (bytes === undefined) continue;
      this.last.set(pid, bytes);
      this.peak.set(pid, Math.max(bytes, this.peak.get(pid) ?? 0));
    }
  }

  readings(): MemoryReading[] {
    this.sample();
    return this.targets.map(({ name, pid }) => ({
      process: name,
      pid,
      peakMb: mb(this.peak.get(pid)),
      lastMb: mb(this.last.get(pid)),
    }));
  }

  stop(): MemoryReading[] {
    const out = this.readings();
    clearInterval(this.timer);
    return out;
  }
}
