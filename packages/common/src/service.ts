import path from 'node:path';
import type { Express } from 'express';
import { resolveAdminToken } from './admin-token';
import { ConfigError, type CommonConfig } from './config';
import { storageChecks, type Readiness } from './http/health';
import { handleProcessSignals, serve } from './lifecycle';
import { createLogger, resolveLogFormat, type Logger } from './logger';
import { migrateDatabase, openStorage, type Storage, type StorageOverrides } from './storage';
import { shutdownTracing } from './tracing';

export interface ServiceDeps<C> {
  config: C;
  storage: Storage;
  logger: Logger;
  readiness: Readiness;
  /** ADMIN_TOKEN (generated in embedded mode); unset when only ADMIN_TOKENS name the operators. */
  adminToken?: string;
}

export interface BuiltService {
  publicApp: Express;
  adminApp: Express;
  /** Background workers to stop on shutdown. */
  stop?(): Promise<void>;
}

export interface ServiceDefinition<C extends CommonConfig> {
  name: string;
  migrationsDir: string;
  loadConfig(env: NodeJS.ProcessEnv): Readonly<C>;
  listen(config: C): {
    port: number;
    adminPort: number;
    publicUrl: string;
    portVariables?: { port: string; adminPort: string };
  };
  build(deps: ServiceDeps<C>): Promise<BuiltService>;
}

export interface RunningService {
  name: string;
  publicUrl: string;
  adminUrl: string;
  storage: Storage['describe'];
  logger: Logger;
  stop(): Promise<void>;
}

/** config → storage (migrated) → app → listen. The returned stop() drains and closes everything. */
export async function startService<C extends CommonConfig>(
  def: ServiceDefinition<C>,
  config: Readonly<C>,
  options: Pick<StorageOverrides, 'sharedDatabase'> = {},
): Promise<RunningService> {
  const logger = createLogger(
    def.name,
    config.LOG_LEVEL,
    resolveLogFormat(config.LOG_FORMAT ?? 'json', process.stdout.isTTY),
  );
  const adminToken =
    config.ADMIN_TOKENS && !config.ADMIN_TOKEN && config.DATABASE_URL
      ? undefined
      : resolveAdminToken(config.ADMIN_TOKEN, config.DATA_DIR, !config.DATABASE_URL);
  const storage = await openStorage(def.name, config, def.migrationsDir, logger, options);
  // a service adds its own checks and rule in build(), when storage alone does not decide
  const readiness: Readiness = { shuttingDown: false, checks: storageChecks(storage) };
  let built: BuiltService;
  try {
    built = await def.build({ config, storage, logger, readiness, adminToken });
  } catch (err) {
    await storage.close();
    throw err;
  }
  const { port, adminPort, publicUrl, portVariables } = def.listen(config);
  const handle = await serve({
    logger,
    publicApp: built.publicApp,
    adminApp: built.adminApp,
    port,
    adminPort,
    adminHost: config.ADMIN_HOST,
    portVariables,
    readiness,
    shutdownDelayMs: config.SHUTDOWN_DELAY_MS,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    onClose: async () => {
      await built.stop?.();
      await storage.close();
    },
  }).catch(async (err: unknown) => {
    await built.stop?.();
    await storage.close();
    throw err;
  });
  const adminHost = config.ADMIN_HOST.includes(':') ? `[${config.ADMIN_HOST}]` : config.ADMIN_HOST;
  logger.info('listening', { public_port: handle.publicPort, admin_port: handle.adminPort, public_url: publicUrl });
  return {
    name: def.name,
    publicUrl,
    adminUrl: `http://${adminHost}:${handle.adminPort}`,
    storage: storage.describe,
    logger,
    stop: handle.stop,
  };
}

/** Prints a config problem as one line and exits non-zero; other start-up failures likewise. */
export function exitOnStartupError(service: string, err: unknown): never {
  const message =
    err instanceof ConfigError ? err.message : `Failed to start ${service}: ${(err as Error).message ?? String(err)}`;
  process.stderr.write(`${service}: ${message}\n`);
  process.exit(1);
}

/** `node main.js migrate`: applies pending migrations and exits 0 (a Kubernetes init container, a release step). */
export async function runMigrate<C extends CommonConfig>(
  def: ServiceDefinition<C>,
  env: NodeJS.ProcessEnv,
): Promise<number[]> {
  const config = def.loadConfig(env);
  const logger = createLogger(
    def.name,
    config.LOG_LEVEL,
    resolveLogFormat(config.LOG_FORMAT ?? 'json', process.stdout.isTTY),
  );
  const applied = await migrateDatabase(def.name, config, def.migrationsDir, logger);
  logger.info('migrate: schema up to date', { schema: def.name, applied });
  return applied;
}

/**
 * Entry point for running one service on its own (`node main.js`, the container command), or one of
 * its commands: `node main.js migrate`.
 */
export async function runStandalone<C extends CommonConfig>(
  def: ServiceDefinition<C>,
  argv: string[] = process.argv.slice(2),
): Promise<void> {
  if (argv.length > 0 && (argv[0] !== 'migrate' || argv.length > 1)) {
    process.stderr.write(`${def.name}: unknown arguments: ${argv.join(' ')}\nUsage: node dist/main.js [migrate]\n`);
    process.exit(2);
  }
  if (argv[0] === 'migrate') {
    try {
      await runMigrate(def, process.env);
      await shutdownTracing();
    } catch (err) {
      exitOnStartupError(def.name, err);
    }
    process.exit(0);
  }
  let running: RunningService;
  try {
    running = await startService(def, def.loadConfig(process.env));
  } catch (err) {
    exitOnStartupError(def.name, err);
  }
  handleProcessSignals(running.logger, async () => {
    await running.stop();
    await shutdownTracing();
  });
}

export const migrationsDirOf = (serviceRoot: string) => path.join(serviceRoot, 'migrations');
