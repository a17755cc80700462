import type { Logger } from './logger';

export interface WorkerLoopOptions {
  name: string;
  /** Runs one pass; returns true when there may be more work at once (a full batch). */
  pass(): Promise<boolean>;
  /** Pause between passes when idle; wake() cuts it short. */
  intervalMs: number;
  logger: Logger;
  /** Pause after a failed pass (the database may be away); default intervalMs, at least 1 s. */
  failureBackoffMs?: number;
}

/**
 * The background loop every worker shares: one pass at a time, again at once while a pass says there is
 * more, otherwise after intervalMs or when wake() is called (a commit in this process). stop() waits for
 * the pass in flight. Its timer is unref'd, so a worker never keeps a process alive on its own.
 */
export class WorkerLoop {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = true;
  private wakeRequested = false;

  constructor(private readonly options: WorkerLoopOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Runs a pass soon (or right after the one in flight). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) this.wakeRequested = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), ms);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    this.timer = undefined;
    let more = false;
    let failed = false;
    this.running = this.options
      .pass()
      .then((m) => void (more = m))
      .catch((err: Error) => {
        failed = true;
        this.options.logger.warn(`${this.options.name} pass failed`, { error: err.message });
      });
    await this.running;
    this.running = undefined;
    const woken = this.wakeRequested;
    this.wakeRequested = false;
    if (failed) this.schedule(this.options.failureBackoffMs ?? Math.max(1000, this.options.intervalMs));
    else this.schedule(more || woken ? 0 : this.options.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
