import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from './logger';
import { answerClientError } from './http/client-error';
import { createExpressServer } from './http/express-server';
import type { Readiness } from './http/health';

export interface ServerHandle {
  publicPort: number;
  adminPort: number;
  stop(): Promise<void>;
}

export interface ServeOptions {
  logger: Logger;
  publicApp: Express;
  adminApp: Express;
  port: number;
  adminPort: number;
  adminHost: string;
  /** Environment variable names of the two ports, for error messages. */
  portVariables?: { port: string; adminPort: string };
  readiness: Readiness;
  /** After SIGTERM: how long to keep serving with /readyz at 503, while load balancers stop sending traffic. */
  shutdownDelayMs?: number;
  /** Then: how long in-flight requests may take before their connections are closed. */
  shutdownTimeoutMs: number;
  /** Waits out the shutdown delay; tests replace it to decide when the delay ends. */
  delay?(ms: number): Promise<void>;
  /** Closes pools and workers after the listeners have drained. */
  onClose(): Promise<void>;
}

function listen(app: Express, port: number, host: string | undefined, variable: string): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = createExpressServer(app);
    server.keepAliveTimeout = 65000;
    server.headersTimeout = 66000;
    server.requestTimeout = 30000;
    server.on('clientError', answerClientError);
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE')
        reject(
          new Error(
            `port ${port} is already in use (is another instance running? set ${variable} to use another port)`,
          ),
        );
      else if (err.code === 'EACCES')
        reject(new Error(`no permission to listen on port ${port} (set ${variable} to a port above 1023)`));
      else reject(err);
    });
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * Stops accepting, lets in-flight requests finish, and closes each connection as soon as it is idle
 * (keep-alive connections would otherwise stay open until the timeout); after timeoutMs, closes the rest.
 */
function drain(server: http.Server, timeoutMs: number, logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    const force = setTimeout(() => {
      logger.warn('shutdown timeout: closing connections with requests still in flight', { timeout_ms: timeoutMs });
      server.closeAllConnections();
    }, timeoutMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Once draining, every response closes its connection, so keep-alive clients reconnect to another replica. */
function closeConnectionsWhen(server: http.Server, draining: () => boolean): void {
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (draining()) res.setHeader('Connection', 'close');
  });
}

/**
 * Listens on the public and admin ports. stop() drains as a load-balanced service should: /readyz answers
 * 503 at once while requests are still served for shutdownDelayMs; then the listeners stop accepting,
 * in-flight requests get shutdownTimeoutMs to finish, and storage closes.
 */
export async function serve(options: ServeOptions): Promise<ServerHandle> {
  const names = options.portVariables ?? { port: 'the port variable', adminPort: 'the admin port variable' };
  const publicServer = await listen(options.publicApp, options.port, undefined, names.port);
  let adminServer: http.Server;
  try {
    adminServer = await listen(options.adminApp, options.adminPort, options.adminHost, names.adminPort);
  } catch (err) {
    await drain(publicServer, 0, options.logger);
    throw err;
  }
  let stopping: Promise<void> | undefined;
  for (const server of [publicServer, adminServer]) closeConnectionsWhen(server, () => stopping !== undefined);
  const delayMs = options.shutdownDelayMs ?? 0;
  const drainAll = async () => {
    options.readiness.shuttingDown = true;
    if (delayMs > 0) {
      options.logger.info('draining: /readyz answers 503, still serving', { delay_ms: delayMs });
      await (options.delay ?? sleep)(delayMs);
    }
    const timeout = options.shutdownTimeoutMs;
    await Promise.all([drain(publicServer, timeout, options.logger), drain(adminServer, timeout, options.logger)]);
    await options.onClose();
  };
  return {
    publicPort: (publicServer.address() as AddressInfo).port,
    adminPort: (adminServer.address() as AddressInfo).port,
    stop() {
      stopping ??= drainAll();
      return stopping;
    },
  };
}

/**
 * A signal that arrives within this long of the first is the same request delivered twice (the terminal
 * signals the whole foreground group, and a launcher in it passes the signal on too), not a force quit.
 */
export const DUPLICATE_SIGNAL_MS = 2000;

/** How often a program started with exitWithParent looks whether its parent is still there. */
const PARENT_CHECK_MS = 500;

export interface ProcessSignalOptions {
  /**
   * The parent's pid as the program saw it when it began (process.ppid then): stop, the same orderly
   * way, once the parent is gone (`pnpm start` killed on its own), which shows as a new parent id, the
   * orphan re-parented to init or a subreaper. Not with a parent of pid 1 (a container's init, systemd).
   */
  exitWithParent?: number;
}

/**
 * SIGTERM/SIGINT stop every handle once, log "stopped" and exit 0. The same or another signal within
 * DUPLICATE_SIGNAL_MS of the first is the same request delivered again and is ignored; one later is a
 * force quit (exit 1 at once). Also logs stray errors.
 */
export function handleProcessSignals(
  logger: Logger,
  stop: () => Promise<void>,
  options: ProcessSignalOptions = {},
): void {
  const now = () => performance.now();
  let firstAt: number | undefined;
  let parentWatch: NodeJS.Timeout | undefined;
  const shutDown = (details: { signal?: NodeJS.Signals; reason?: string }) => {
    if (firstAt !== undefined) {
      if (details.signal && now() - firstAt >= DUPLICATE_SIGNAL_MS) {
        logger.warn('second signal: quitting without waiting for the shutdown', { signal: details.signal });
        process.exit(1);
      }
      if (details.signal) logger.info('already shutting down: the same request again', { signal: details.signal });
      return;
    }
    firstAt = now();
    clearInterval(parentWatch);
    logger.info('shutting down', details);
    stop().then(
      () => {
        logger.info('stopped', { exit_code: 0 });
        process.exit(0);
      },
      (err: unknown) => {
        logger.error('shutdown failed', { error: (err as Error).message });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', (signal) => shutDown({ signal }));
  process.on('SIGINT', (signal) => shutDown({ signal }));
  const parent = options.exitWithParent;
  if (parent !== undefined && parent > 1) {
    parentWatch = setInterval(() => {
      // process.ppid is read anew each time: an orphan is re-parented to init or a subreaper
      if (process.ppid !== parent) shutDown({ reason: 'parent exited' });
    }, PARENT_CHECK_MS);
    parentWatch.unref();
  }
  process.on('unhandledRejection', (reason) => logger.error('unhandled rejection', { error: String(reason) }));
  process.on('uncaughtException', (err) => {
    logger.error('uncaught exception', { error: err.message, stack: err.stack });
    process.exit(1);
  });
}
