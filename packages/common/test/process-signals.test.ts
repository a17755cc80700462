import { spawn } from 'node:child_process';
import path from 'node:path';

/** The child's JSON log lines. */
const messages = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; message: string; signal?: string; exit_code?: number });

describe('handleProcessSignals', () => {
  it('takes one Ctrl-C delivered several times (the group’s, a launcher’s relay) as one request: drains, exits 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'support', 'signals-child.ts')], {
      cwd: path.join(__dirname, '..'),
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    while (!stdout.includes('ready\n')) {
      if (child.exitCode !== null) throw new Error(`the child exited: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // the same press arrives again while the shutdown runs: from the terminal's group and from a relay
    child.kill('SIGINT');
    while (!stdout.includes('"draining"')) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGINT');
    // one at a time: two signals pending at once may be handed to the process in either order
    while (!stdout.includes('already shutting down')) {
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGTERM');
    // the copies are taken for what they are before the shutdown is let finish
    while (stdout.split('already shutting down').length < 3) {
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    child.stdin.end('go\n');
    expect({ code: await exited, stderr }).toEqual({ code: 0, stderr: '' });
    expect(
      messages(stdout).map(({ level, message, signal, exit_code }) => ({ level, message, signal, exit_code })),
    ).toEqual([
      { level: 'info', message: 'shutting down', signal: 'SIGINT', exit_code: undefined },
      { level: 'info', message: 'draining', signal: undefined, exit_code: undefined },
      {
        level: 'info',
        message: 'already shutting down: the same request again',
        signal: 'SIGINT',
        exit_code: undefined,
      },
      {
        level: 'info',
        message: 'already shutting down: the same request again',
        signal: 'SIGTERM',
        exit_code: undefined,
      },
      { level: 'info', message: 'stopped', signal: undefined, exit_code: 0 },
    ]);
  }, 120_000);
});
