import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from './logger';
import { answerClientError } from './http/client-error';
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
  shutdownTimeoutMs: number;
  /** Closes pools and workers after the listeners have drained. */
  onClose(): Promise<void>;
}

function listen(app: Express, port: number, host: string | undefined, variable: string): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(app);
    server.keepAliveTimeout = 65000;
    server.headersTimeout = 66000;
    server.requestTimeout = 30000;
    server.on('clientError', answerClientError);
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(new Error(`port ${port} is already in use (is another instance running? set ${variable} to use another port)`));
      else if (err.code === 'EACCES') reject(new Error(`no permission to listen on port ${port} (set ${variable} to a port above 1023)`));
      else reject(err);
    });
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

function drain(server: http.Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** Listens on the public and admin ports; stop() turns readiness off, lets in-flight requests finish, then closes storage. */
export async function serve(options: ServeOptions): Promise<ServerHandle> {
  const names = options.portVariables ?? { port: 'the port variable', adminPort: 'the admin port variable' };
  const publicServer = await listen(options.publicApp, options.port, undefined, names.port);
  let adminServer: http.Server;
  try {
    adminServer = await listen(options.adminApp, options.adminPort, options.adminHost, names.adminPort);
  } catch (err) {
    await drain(publicServer, 0);
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    publicPort: (publicServer.address() as AddressInfo).port,
    adminPort: (adminServer.address() as AddressInfo).port,
    stop() {
      stopping ??= (async () => {
        options.readiness.shuttingDown = true;
        await Promise.all([drain(publicServer, options.shutdownTimeoutMs), drain(adminServer, options.shutdownTimeoutMs)]);
        await options.onClose();
      })();
      return stopping;
    },
  };
}

/** SIGTERM/SIGINT stop every handle once and exit 0; a second signal exits at once. Also logs stray errors. */
export function handleProcessSignals(logger: Logger, stop: () => Promise<void>): void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(1);
    signalled = true;
    logger.info('shutting down', { signal });
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('shutdown failed', { error: (err as Error).message });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('unhandledRejection', (reason) => logger.error('unhandled rejection', { error: String(reason) }));
  process.on('uncaughtException', (err) => {
    logger.error('uncaught exception', { error: err.message, stack: err.stack });
    process.exit(1);
  });
}
