import type { Logger } from '../logger';

// the clock is the global `performance` (the same object as node:perf_hooks'), so that a test's fake
// timers move it together with setTimeout: the batching interval is measured on one clock

// winston's info keys for the level and the finished line (triple-beam's symbols)
const LEVEL = Symbol.for('level');
const MESSAGE = Symbol.for('message');

export interface RequestLineFields {
  request_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  /** The trace this request belongs to, when tracing is on. */
  trace_id?: string;
}

const q = JSON.stringify;

/** Under load, batches go out at most this often (a line waits at most this long)… */
export const FLUSH_INTERVAL_MS = 20;
/** …unless the batch reaches this many characters first. */
const FLUSH_BYTES = 64 * 1024;

/** The ISO timestamp of the current millisecond, made once per millisecond (the lines of one share it). */
let stampedAt = 0;
let stamp = '';
function isoNow(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = new Date(now).toISOString();
  }
  return stamp;
}

/** Batches whose flush is pending, so that a process exiting meanwhile still writes them. */
const pendingFlushes = new Set<() => void>();
let exitHookInstalled = false;
const flushAllPending = () => {
  for (const flush of [...pendingFlushes]) flush();
};

/**
 * The per-request log line, pre-formatted: the same JSON that the logger's format writes (keys
 * sorted, service and timestamp added; none of these keys is secret-looking, so nothing to redact).
 * Transports that take finished lines (the console, files, streams) get the lines in batches, one
 * write system call for many requests instead of one each, and none of winston's per-call stream and
 * format work on the hot path. A batch is handed over in the next turn of the event loop; under load,
 * when the previous batch went out less than FLUSH_INTERVAL_MS ago, the lines wait until that much
 * time has passed (or until the batch holds FLUSH_BYTES): standard output is written synchronously
 * (a file, or a pipe on Linux), and one write per turn was the largest cost of the log line (the
 * profile of discovery under load, bench/README.md). A line is thus written at most
 * FLUSH_INTERVAL_MS late; the batch is written when the process exits, too. A transport with a format
 * of its own gets each line the usual way, at once.
 */
export function requestLineWriter(logger: Logger): (fields: RequestLineFields) => void {
  const service = (logger.defaultMeta as { service?: string } | undefined)?.service;
  const serviceJson = q(service);
  const info = logger.levels.info;
  const done = () => undefined;
  let batch: string[] = [];
  let batchBytes = 0;
  let flushedAt = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    pendingFlushes.delete(flush);
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    flushedAt = performance.now();
    if (batch.length === 0) return;
    const lines = batch.join('\n');
    batch = [];
    batchBytes = 0;
    const entry = { level: 'info', message: 'request', [LEVEL]: 'info', [MESSAGE]: lines };
    for (const transport of logger.transports) {
      if (
        transport.silent ||
        transport.format ||
        (transport.level !== undefined && logger.levels[transport.level] < info)
      )
        continue;
      transport.log?.(entry, done);
    }
  };
  return (fields) => {
    if (logger.silent || logger.levels[logger.level] < info) return;
    const timestamp = isoNow();
    const line =
      `{"duration_ms":${fields.duration_ms},"level":"info","message":"request","method":${q(fields.method)},` +
      `"path":${q(fields.path)},"request_id":${q(fields.request_id)},"service":${serviceJson},` +
      `"status":${fields.status},"timestamp":"${timestamp}"` +
      (fields.trace_id === undefined ? '}' : `,"trace_id":${q(fields.trace_id)}}`);
    let formatted = false;
    for (const transport of logger.transports) {
      if (
        !transport.format ||
        transport.silent ||
        (transport.level !== undefined && logger.levels[transport.level] < info)
      )
        continue;
      formatted = true;
      transport.write({
        level: 'info',
        message: 'request',
        request_id: fields.request_id,
        method: fields.method,
        path: fields.path,
        status: fields.status,
        duration_ms: fields.duration_ms,
        ...(fields.trace_id === undefined ? {} : { trace_id: fields.trace_id }),
        service,
        timestamp,
        [LEVEL]: 'info',
        [MESSAGE]: line,
      });
    }
    if (formatted && logger.transports.every((t) => t.format)) return;
    batch.push(line);
    batchBytes += line.length;
    if (batch.length === 1) {
      pendingFlushes.add(flush);
      if (!exitHookInstalled) {
        exitHookInstalled = true;
        process.once('exit', flushAllPending);
      }
      const wait = flushedAt + FLUSH_INTERVAL_MS - performance.now();
      if (wait > 0) timer = setTimeout(flush, wait).unref();
      else setImmediate(flush).unref();
    } else if (batchBytes >= FLUSH_BYTES) flush();
  };
}
