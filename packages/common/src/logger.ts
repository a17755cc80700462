import winston from 'winston';

export type Logger = winston.Logger;

/** How log lines look: one JSON document each (the default, the images), or one readable line (a terminal). */
export type LogFormat = 'json' | 'pretty';
/** LOG_FORMAT: `auto` is pretty when the output is a terminal, JSON otherwise. */
export type LogFormatSetting = LogFormat | 'auto';

const SECRET_KEY = /pass(word)?|secret|token|authorization|api_?key|cookie|code_verifier/i;

/** Replaces values of secret-looking keys so a careless log call cannot leak them. */
const redact = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (SECRET_KEY.test(key) && key !== 'request_id') info[key] = '[redacted]';
  }
  return info;
});

export const resolveLogFormat = (setting: LogFormatSetting, isTTY: boolean | undefined): LogFormat =>
  setting === 'auto' ? (isTTY ? 'pretty' : 'json') : setting;

/**
 * Colours or not, by the common conventions: FORCE_COLOR set (other than 0 or false) turns them on and
 * FORCE_COLOR=0 off, whatever else is set (as Node.js does); else NO_COLOR set to anything non-empty turns
 * them off; else a terminal has them unless TERM=dumb.
 */
export function colorsWanted(env: NodeJS.ProcessEnv, stream: { isTTY?: boolean }): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  if (env.NO_COLOR) return false;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

const ANSI = { dim: 2, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36 } as const;
type Colour = keyof typeof ANSI;
const paint = (on: boolean, colour: Colour, text: string) => (on ? `\x1b[${ANSI[colour]}m${text}\x1b[0m` : text);

const LEVEL_COLOURS: Record<string, Colour> = { error: 'red', warn: 'yellow', info: 'green', debug: 'blue' };
const statusColour = (status: number): Colour =>
  status >= 500 ? 'red' : status >= 400 ? 'yellow' : status >= 300 ? 'cyan' : 'green';

/** Fields every line has, shown in its own place rather than as key=value. */
const FRAME = new Set(['level', 'message', 'service', 'timestamp']);
const REQUEST = new Set(['method', 'path', 'status', 'duration_ms', 'request_id', 'trace_id']);

const two = (n: number, width = 2) => String(n).padStart(width, '0');
/** The local time of day of a log line, to the millisecond. */
function timeOfDay(timestamp: unknown): string {
  const date = typeof timestamp === 'string' ? new Date(timestamp) : new Date();
  const at = Number.isNaN(date.getTime()) ? new Date() : date;
  return `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}.${two(at.getMilliseconds(), 3)}`;
}

function fieldText(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (value instanceof Error) return JSON.stringify(value.message);
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : json;
}

/**
 * One readable line of a log entry (already redacted): the time, the service, then for a request its
 * method, path, status and duration, for anything else its level, message and fields as key=value.
 */
export function prettyLine(info: Record<string, unknown>, colors: boolean): string {
  const time = paint(colors, 'dim', timeOfDay(info.timestamp));
  const service = paint(colors, 'magenta', String(info.service ?? '').padEnd(12));
  const level = String(info.level ?? 'info');
  if (info.message === 'request' && typeof info.method === 'string' && typeof info.status === 'number') {
    const duration = typeof info.duration_ms === 'number' ? `${info.duration_ms.toFixed(1)} ms` : '';
    const extra = Object.keys(info).filter((k) => !FRAME.has(k) && !REQUEST.has(k));
    return [
      time,
      service,
      info.method.padEnd(6),
      String(info.path ?? ''),
      paint(colors, statusColour(info.status), String(info.status)),
      paint(colors, 'dim', duration),
      ...extra.map((k) => `${k}=${fieldText(info[k])}`),
    ]
      .filter((part) => part !== '')
      .join(' ');
  }
  const fields = Object.keys(info)
    .filter((k) => !FRAME.has(k))
    .map((k) => `${paint(colors, 'dim', `${k}=`)}${fieldText(info[k])}`);
  return [
    time,
    service,
    paint(colors, LEVEL_COLOURS[level] ?? 'dim', level.padEnd(5)),
    String(info.message ?? ''),
    ...fields,
  ]
    .filter((part) => part !== '')
    .join(' ');
}

const MESSAGE = Symbol.for('message');
const pretty = (colors: boolean) =>
  winston.format((info) => {
    (info as unknown as Record<symbol, string>)[MESSAGE] = prettyLine(info, colors);
    return info;
  })();

/**
 * The service's logger, on standard output. `json` (the default): one JSON document a line, for log
 * collectors. `pretty`: one readable line each, coloured when `colors` says so (colorsWanted()). Both
 * redact secret-looking fields.
 */
export function createLogger(
  service: string,
  level: string,
  format: LogFormat = 'json',
  colors = colorsWanted(process.env, process.stdout),
): Logger {
  return winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    defaultMeta: { service },
    format: winston.format.combine(redact(), winston.format.timestamp(), winston.format.json()),
    transports: [
      format === 'pretty'
        ? new winston.transports.Console({ format: winston.format.combine(redact(), pretty(colors)) })
        : new winston.transports.Console(),
    ],
  });
}
