/** The machine: CPU pinning with taskset, process trees and their memory, and a description for the report. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

export const SERVER_CORE = 0;
export const DRIVER_CORE = 1;

export interface Pinning {
  /** True when servers run on SERVER_CORE and this driver on DRIVER_CORE. */
  pinned: boolean;
  /** Why not, for the report header. */
  note: string;
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Pins this process (the autocannon driver, all its threads) to DRIVER_CORE, if taskset and two cores are there. */
export function pinDriver(): Pinning {
  if (!hasTaskset()) return { pinned: false, note: 'taskset not found (util-linux): servers and driver run UNPINNED' };
  if (os.cpus().length < 2)
    return { pinned: false, note: `only ${os.cpus().length} CPU: servers and driver run UNPINNED` };
  try {
    execFileSync('taskset', ['-a', '-cp', String(DRIVER_CORE), String(process.pid)], { stdio: 'ignore' });
  } catch (err) {
    return {
      pinned: false,
      note: `taskset could not pin (${(err as Error).message.split('\n')[0]}): servers and driver run UNPINNED`,
    };
  }
  return {
    pinned: true,
    note: `servers on core ${SERVER_CORE} (taskset -c ${SERVER_CORE}), autocannon driver on core ${DRIVER_CORE}`,
  };
}

/** Spawns a server program, under `taskset -c SERVER_CORE` when pinning, with its output to a file. */
export function spawnServer(
  pinning: Pinning,
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; logFile: string },
): ChildProcess {
  const out = fs.openSync(options.logFile, 'a');
  const [cmd, argv] = pinning.pinned ? ['taskset', ['-c', String(SERVER_CORE), command, ...args]] : [command, args];
  const child = spawn(cmd, argv, { cwd: options.cwd, env: options.env, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  return child;
}

/** The process and all its descendants (from /proc), parents first. */
export function processTree(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const queue = [rootPid];
  while (queue.length) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Resident set size in bytes (VmRSS), or undefined when the process is gone. */
export function rss(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A process's resident memory in bytes: its RSS, and its PSS (proportional set size: each resident
 * page divided by the number of processes that map it, from /proc/PID/smaps_rollup, as `smem` reports
 * it). Summed over processes, RSS counts a page shared by two of them (the node binary's, a shared
 * library's) twice; PSS counts it once. PSS is undefined where smaps_rollup is missing (Linux < 4.14).
 */
export function residentMemory(pid: number): { rss: number; pss?: number } | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (name: string) => {
      const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text);
      return m ? Number(m[1]) * 1024 : undefined;
    };
    const r = kb('Rss');
    if (r !== undefined) return { rss: r, pss: kb('Pss') };
  } catch {
    // no smaps_rollup (or the process is gone): RSS alone
  }
  const r = rss(pid);
  return r === undefined ? undefined : { rss: r };
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

/**
 * The node process that runs the program: `taskset` execs its command, and the tsx CLI runs the
 * program in a child node process; that child is the deepest node process of the tree.
 */
export function serviceProcess(rootPid: number): number {
  const nodes = processTree(rootPid).filter((pid) => /(^|\/)node(\s|$)/.test(commandLine(pid).split(' ')[0] ?? ''));
  return nodes.length ? nodes[nodes.length - 1] : rootPid;
}

/** Every thread of every process in the tree on SERVER_CORE (for servers started before pinning was known). */
export function pinTree(pinning: Pinning, rootPid: number): void {
  if (!pinning.pinned) return;
  for (const pid of processTree(rootPid)) {
    try {
      execFileSync('taskset', ['-a', '-cp', String(SERVER_CORE), String(pid)], { stdio: 'ignore' });
    } catch {
      // exited meanwhile
    }
  }
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  try {
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    // gone
  }
  return inodes;
}

/**
 * True when a process of this tree listens on the TCP port (from /proc/net/tcp{,6}): readiness must
 * come from our server, not from another program that took the port meanwhile on a shared machine.
 */
export function listensOn(rootPid: number, port: number): boolean {
  const inodes = new Set(processTree(rootPid).flatMap((pid) => [...socketInodes(pid)]));
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A') continue; // LISTEN
      if (cols[1].endsWith(`:${hex}`) && inodes.has(cols[9])) return true;
    }
  }
  return false;
}

/** CPU affinity of a process as taskset reports it, for the report ("0", "1", "0,1"). */
export function affinity(pid: number): string {
  try {
    return /:\s*(\S+)\s*$/.exec(execFileSync('taskset', ['-cp', String(pid)], { encoding: 'utf8' }))?.[1] ?? '?';
  } catch {
    return '?';
  }
}

export interface Machine {
  cpu: string;
  cpus: number;
  memory: string;
  node: string;
  os: string;
  lscpu: string;
}

export function describeMachine(): Machine {
  let lscpu = '';
  try {
    lscpu = execFileSync('lscpu', { encoding: 'utf8' })
      .split('\n')
      .filter((l) =>
        /^(Architecture|CPU\(s\)|Model name|Thread\(s\) per core|Core\(s\) per socket|Hypervisor vendor|L2 cache|L3 cache|CPU max MHz|BogoMIPS):/.test(
          l,
        ),
      )
      .map((l) => l.replace(/\s{2,}/g, ' '))
      .join('; ');
  } catch {
    lscpu = 'lscpu not available';
  }
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cpus: os.cpus().length,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    lscpu,
  };
}

export const mb = (bytes: number | undefined) =>
  bytes === undefined ? undefined : Math.round((bytes / 2 ** 20) * 10) / 10;
