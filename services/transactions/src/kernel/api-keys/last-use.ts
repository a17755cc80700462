/**
 * Records an API key's last use at most once per interval per key in this process, never on the
 * request's path: the write runs in the background and a failure is only reported.
 */
export class LastUseRecorder {
  private readonly recorded = new Map<string, number>();

  constructor(
    private readonly write: (keyId: string) => Promise<void>,
    private readonly onError: (keyId: string, err: Error) => void,
    private readonly intervalMs = 60000,
    private readonly max = 10000,
  ) {}

  /** True when a write was started. */
  record(keyId: string, now = Date.now()): boolean {
    const last = this.recorded.get(keyId);
    if (last !== undefined && now - last < this.intervalMs) return false;
    if (this.recorded.size >= this.max) this.recorded.clear();
    this.recorded.set(keyId, now);
    this.write(keyId).catch((err: Error) => this.onError(keyId, err));
    return true;
  }
}
