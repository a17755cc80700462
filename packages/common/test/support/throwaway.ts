import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * The kernel's ephemeral range (outgoing connections take their local port from it; Linux's default
 * 32768–60999).
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs
      .readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low > 0 && high >= low) return [low, high];
  } catch {
    // not Linux: the IANA dynamic range, which macOS and Windows use
  }
  return [49152, 65535];
}

/** Ports this process has handed out: never twice. */
const handedOut = new Set<number>();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    // every address (as the services' public ports listen): a port bound on any one of them is taken
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/**
 * A free port for a server a test starts (a service, a throwaway Redis or Postgres), chosen outside the
 * kernel's ephemeral range. A port the kernel handed out (listen on port 0) is one it also gives to
 * outgoing connections: in the seconds before the test's server binds it, a connection of the other
 * test worker (to Postgres, to Redis, to a test server) could take it, and the server would fail with
 * EADDRINUSE. Below the ephemeral range only another test's choice could, and the choice is random.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const [from, to] = low > 12000 ? [10000, low - 1] : [61000, 65535];
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (handedOut.has(port) || !(await bindable(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${from} and ${to}`);
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 15000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not come up in ${timeoutMs} ms`);
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/** A throwaway redis-server on its own port: for tests that stop or break the server. */
export class ThrowawayRedis {
  private child?: ChildProcess;
  constructor(readonly port: number) {}
  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await waitFor(() => portOpen(this.port), 'redis-server');
  }
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}

function pgBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) return undefined;
  const version = fs.readdirSync(base).sort().pop();
  return version ? path.join(base, version, 'bin') : undefined;
}

/** A scratch Postgres cluster (initdb + pg_ctl, as user postgres when run as root). */
export class ThrowawayPostgres {
  private readonly dir: string;
  private readonly bin: string;
  constructor(readonly port: number) {
    const bin = pgBinDir();
    if (!bin) throw new Error('Postgres server binaries not found under /usr/lib/postgresql');
    this.bin = bin;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-pg-'));
    fs.chmodSync(this.dir, 0o777);
  }
  get url() {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }
  private run(tool: string, args: string[]): void {
    const command = path.join(this.bin, tool);
    if (process.getuid?.() === 0)
      execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'ignore' });
    else execFileSync(command, args, { stdio: 'ignore' });
  }
  async init(): Promise<void> {
    this.run('initdb', ['-D', path.join(this.dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
  }
  async start(): Promise<void> {
    this.run('pg_ctl', [
      '-D',
      path.join(this.dir, 'data'),
      '-w',
      '-l',
      path.join(this.dir, 'log'),
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
    await waitFor(() => portOpen(this.port), 'postgres');
  }
  async stop(): Promise<void> {
    this.run('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
  }
  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A TCP proxy in front of a server, to simulate a network partition: cut() drops every connection and
 * refuses new ones while the server keeps its data; heal() lets clients reconnect.
 */
export class CuttableProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private cutOff = false;
  port = 0;

  constructor(private readonly target: number) {
    this.server = net.createServer((client) => this.accept(client));
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private accept(client: net.Socket): void {
    if (this.cutOff) return void client.destroy();
    const upstream = net.connect(this.target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  }

  cut(): void {
    this.cutOff = true;
    for (const socket of this.sockets) socket.destroy();
  }

  heal(): void {
    this.cutOff = false;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A throwaway redis-server, started, behind a started proxy that the test can cut and heal: connect to `proxy.url`. */
export async function cuttableRedis(): Promise<{ redis: ThrowawayRedis; proxy: CuttableProxy }> {
  const redis = new ThrowawayRedis(await freePort());
  await redis.start();
  const proxy = new CuttableProxy(redis.port);
  await proxy.start();
  return { redis, proxy };
}
