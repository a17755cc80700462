import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { colorsWanted, prettyLine, resolveLogFormat } from '../src';

/**
 * LOG_FORMAT (issue 27): on a terminal one readable line per request and event (time, service, method, path,
 * status, duration; colours when the terminal has them, by NO_COLOR and FORCE_COLOR), JSON lines when the
 * output is not a terminal or LOG_FORMAT=json. Secret-looking fields are redacted either way.
 */
const CHILD = path.join(__dirname, 'support', 'log-format-child.ts');
const AT = '2026-11-27T09:51:02.345Z';
/** The local time of day that a line shows for AT. */
const localTime = (() => {
  const d = new Date(AT);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
})();
const ESC = '\x1b[';

/** The child's standard output through a pipe, with this environment (LOG_FORMAT, NO_COLOR… unset unless given). */
function childThroughPipe(env: NodeJS.ProcessEnv): Promise<string> {
  const base: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
  for (const key of ['LOG_FORMAT', 'NO_COLOR', 'FORCE_COLOR']) delete base[key];
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    cwd: path.join(__dirname, '..'),
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}: ${out}`)))),
  );
}

// the child-process tests start up to three tsx processes each, one after another
jest.setTimeout(120_000);

describe('log lines: LOG_FORMAT', () => {
  it('auto is pretty on a terminal only', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('auto', undefined)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });

  it('colours by FORCE_COLOR, NO_COLOR and the terminal', () => {
    const tty = { isTTY: true };
    const pipe = { isTTY: false };
    expect(colorsWanted({}, tty)).toBe(true);
    expect(colorsWanted({}, pipe)).toBe(false);
    expect(colorsWanted({ TERM: 'dumb' }, tty)).toBe(false);
    expect(colorsWanted({ NO_COLOR: '1' }, tty)).toBe(false);
    expect(colorsWanted({ NO_COLOR: '' }, tty)).toBe(true); // NO_COLOR counts when not empty
    expect(colorsWanted({ FORCE_COLOR: '1' }, pipe)).toBe(true);
    expect(colorsWanted({ FORCE_COLOR: '' }, pipe)).toBe(true);
    expect(colorsWanted({ FORCE_COLOR: '0' }, tty)).toBe(false);
    expect(colorsWanted({ FORCE_COLOR: 'false' }, tty)).toBe(false);
    expect(colorsWanted({ FORCE_COLOR: '1', NO_COLOR: '1' }, pipe)).toBe(true);
  });

  it('writes a request as time, service, method, path, status and duration', () => {
    const info = {
      level: 'info',
      message: 'request',
      service: 'identity',
      timestamp: AT,
      method: 'POST',
      path: '/portal/apps',
      status: 303,
      duration_ms: 12.345,
      request_id: 'r-1',
    };
    expect(prettyLine(info, false)).toBe(`${localTime} identity     POST   /portal/apps 303 12.3 ms`);
    const coloured = prettyLine(info, true);
    expect(coloured).toContain(`${ESC}36m303${ESC}0m`);
    expect(
      coloured
        .split(ESC)
        .map((part, i) => (i === 0 ? part : part.replace(/^\d+m/, '')))
        .join(''),
    ).toBe(prettyLine(info, false));
    expect(prettyLine({ ...info, status: 500 }, true)).toContain(`${ESC}31m500${ESC}0m`);
    expect(prettyLine({ ...info, status: 200 }, true)).toContain(`${ESC}32m200${ESC}0m`);
  });

  it('writes an event as time, service, level, message and its fields', () => {
    const line = prettyLine(
      {
        level: 'warn',
        message: 'delivery failed',
        service: 'transactions',
        timestamp: AT,
        endpoint_id: 'whe_1',
        attempt: 3,
        reason: 'connect ECONNREFUSED 127.0.0.1:9',
        detail: { status: 502 },
      },
      false,
    );
    expect(line).toBe(
      `${localTime} transactions warn  delivery failed endpoint_id=whe_1 attempt=3 reason="connect ECONNREFUSED 127.0.0.1:9" detail={"status":502}`,
    );
    expect(prettyLine({ level: 'error', message: 'x', service: 's', timestamp: AT }, true)).toContain(
      `${ESC}31merror${ESC}0m`,
    );
  });

  it('writes JSON lines when the output is not a terminal, whether LOG_FORMAT is unset or auto', async () => {
    for (const env of [{}, { LOG_FORMAT: 'auto' }, { LOG_FORMAT: 'json', FORCE_COLOR: '1' }]) {
      const lines = (await childThroughPipe(env)).trim().split('\n');
      expect(lines).toHaveLength(2);
      const [event, request] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(event).toMatchObject({ level: 'warn', message: 'portal action refused', service: 'identity' });
      expect(event.client_secret).toBe('[redacted]');
      expect(request).toMatchObject({ message: 'request', method: 'GET', path: '/portal', status: 404 });
      expect(lines.join('\n')).not.toContain('sk_live_123');
    }
  });

  it('writes readable lines with LOG_FORMAT=pretty: no colours through a pipe or with NO_COLOR, colours with FORCE_COLOR', async () => {
    const plain = (await childThroughPipe({ LOG_FORMAT: 'pretty' })).trim().split('\n');
    expect(plain).toHaveLength(2);
    expect(plain[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} identity {5}warn {2}portal action refused app_id=app_1 client_secret=\[redacted\] role=viewer$/,
    );
    expect(plain[1]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} identity {5}GET {4}\/portal 404 1\.5 ms$/);
    expect((await childThroughPipe({ LOG_FORMAT: 'pretty', NO_COLOR: '1' })).trim().split('\n')).toEqual([
      expect.stringContaining('portal action refused'),
      expect.stringContaining('/portal 404'),
    ]);
    const forced = await childThroughPipe({ LOG_FORMAT: 'pretty', FORCE_COLOR: '1' });
    expect(forced).toContain(`${ESC}33m404${ESC}0m`);
    expect(forced).not.toContain('sk_live_123');
  });

  const haveScript = spawnSync('script', ['--version']).status === 0;
  (haveScript ? it : it.skip)('auto on a terminal (a pseudo-terminal): readable lines, coloured', () => {
    const base: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', LOG_FORMAT: 'auto', TERM: 'xterm' };
    delete base.NO_COLOR;
    delete base.FORCE_COLOR;
    const command = `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(CHILD)}`;
    const run = spawnSync('script', ['-qec', command, '/dev/null'], {
      cwd: path.join(__dirname, '..'),
      env: base,
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`${ESC}33m404${ESC}0m`);
    expect(run.stdout).toMatch(/portal action refused/);
    expect(run.stdout).not.toMatch(/^\{/m);
    expect(run.stdout).not.toContain('sk_live_123');
  });
});
