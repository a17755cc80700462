import type { Logger } from '../logger';

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

/**
 * The per-request log line, pre-formatted: the same JSON that the logger's format writes (keys
 * sorted, service and timestamp added; none of these keys is secret-looking, so nothing to redact),
 * handed straight to each transport that takes info lines. This skips winston's per-call stream and
 * format work on the hot path; a transport with a format of its own gets the line the usual way.
 */
export function requestLineWriter(logger: Logger): (fields: RequestLineFields) => void {
  const service = (logger.defaultMeta as { service?: string } | undefined)?.service;
  const serviceJson = q(service);
  const info = logger.levels.info;
  const done = () => undefined;
  return (fields) => {
    if (logger.silent || logger.levels[logger.level] < info) return;
    const timestamp = new Date().toISOString();
    const line =
      `{"duration_ms":${fields.duration_ms},"level":"info","message":"request","method":${q(fields.method)},` +
      `"path":${q(fields.path)},"request_id":${q(fields.request_id)},"service":${serviceJson},` +
      `"status":${fields.status},"timestamp":"${timestamp}"` +
      (fields.trace_id === undefined ? '}' : `,"trace_id":${q(fields.trace_id)}}`);
    const entry = {
      level: 'info',
      message: 'request',
      request_id: fields.request_id,
      method: fields.method,
      path: fields.path,
      status: fields.status,
      duration_ms: fields.duration_ms,
      service,
      timestamp,
      ...(fields.trace_id === undefined ? {} : { trace_id: fields.trace_id }),
      [LEVEL]: 'info',
      [MESSAGE]: line,
    };
    for (const transport of logger.transports) {
      if (transport.silent || (transport.level !== undefined && logger.levels[transport.level] < info)) continue;
      if (transport.format) transport.write(entry);
      else transport.log?.(entry, done);
    }
  };
}
