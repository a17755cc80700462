/**
 * `pnpm start`: the three services in one process for local use (each is also deployable on its
 * own via its main.ts). Embedded Postgres and the in-process cache unless DATABASE_URL / REDIS_URL are set;
 * the embedded Postgres is one for the three (each in its own schema), in DATA_DIR/pg.
 */
// first: with OTEL_EXPORTER_OTLP_ENDPOINT set, the three services trace as one process, "attest"
import './start-tracing';
import path from 'node:path';
import {
  ConfigError,
  createLogger,
  embeddedLayout,
  handleProcessSignals,
  resolveAdminToken,
  SharedEmbeddedPostgres,
  startService,
  type CommonConfig,
  type Logger,
  type RunningService,
} from '@attest/common';
import { loadDemoConfig } from '../apps/demo/src/config';
import { startDemo, type RunningDemo } from '../apps/demo/src/demo';
import { identityService } from '../services/identity/src/main';
import { transactionsService } from '../services/transactions/src/main';
import { pricesService } from '../services/prices/src/main';

// pnpm's shell, whose going away (pnpm killed on its own) stops the services: seen before start-up
const launcher = process.ppid;

async function main(): Promise<void> {
  // a terminal or pipe that went away (the launcher killed) must not turn the orderly stop into a crash
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  const services = [identityService, transactionsService, pricesService] as const;
  let configs;
  let demoConfig;
  try {
    configs = [
      identityService.loadConfig(process.env),
      transactionsService.loadConfig(process.env),
      pricesService.loadConfig(process.env),
    ] as const;
    demoConfig = loadDemoConfig(process.env);
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.message : (err as Error).message}\n`);
    process.exit(1);
  }
  const logger = createLogger('attest', configs[0].LOG_LEVEL);
  const sharedDatabase = sharedEmbeddedDatabase(
    configs[0],
    services.map((s) => s.name),
    logger,
  );
  const started: RunningService[] = [];
  let demo: RunningDemo | undefined;
  const stopAll = async () => {
    await demo?.stop();
    await Promise.all(started.map((s) => s.stop()));
  };
  const startUp = async () => {
    started.push(
      ...(await Promise.all([
        startService(services[0], configs[0], { sharedDatabase }),
        startService(services[1], configs[1], { sharedDatabase }),
        startService(services[2], configs[2], { sharedDatabase }),
      ])),
    );
    if (demoConfig.DEMO_ENABLED) {
      demo = await startDemo({
        issuer: configs[0].issuer,
        adminUrl: started[0].adminUrl,
        adminToken: resolveAdminToken(configs[0].ADMIN_TOKEN, configs[0].DATA_DIR, !configs[0].DATABASE_URL),
        port: demoConfig.DEMO_PORT,
        dataDir: configs[0].DATA_DIR,
        logger,
      });
    }
  };
  const startingUp = startUp();
  // From here on, one Ctrl-C reaches this process once from the terminal and possibly again from a
  // launcher: the duplicate is no force quit; and if pnpm is killed on its own, the services stop with
  // it. A signal during start-up lets the start finish (the embedded database mid-creation), then stops.
  handleProcessSignals(
    logger,
    async () => {
      await startingUp.catch(() => undefined);
      await stopAll();
    },
    { exitWithParent: launcher },
  );
  try {
    await startingUp;
  } catch (err) {
    process.stderr.write(`Failed to start: ${(err as Error).message}\n`);
    await stopAll().catch(() => undefined);
    process.exit(1);
  }
  const dataDir = path.resolve(configs[0].DATA_DIR);
  const lines = [
    '',
    'Attest is running:',
    ...started.map(
      (s) =>
        `  ${s.name.padEnd(13)} ${s.publicUrl.padEnd(24)} admin ${s.adminUrl}  data: ${s.storage.database}; ${s.storage.cache}`,
    ),
    ...(demo
      ? [
          `  ${'demo'.padEnd(13)} ${demo.url.padEnd(24)} open it to sign up with a passkey and sign in (DEMO_ENABLED=false turns it off)`,
        ]
      : []),
    '',
    configs[0].DATABASE_URL ? '' : `Data lives in ${dataDir} (delete it to start afresh).`,
    'Manage apps, users, transactions and prices with, for example:',
    '  pnpm --silent manage app create --name "My app" --redirect-uri http://localhost:3000/callback',
    '  pnpm --silent manage user create --username alice --password "correct horse battery" --verification-level orb',
    'Every command: pnpm manage --help.',
    'Press Ctrl-C to stop.',
    '',
  ];
  process.stdout.write(lines.filter((l, i) => l !== '' || i === 0 || lines[i - 1] !== '').join('\n') + '\n');
}

/** One embedded Postgres for the three services; none with DATABASE_URL, or when an earlier version's per-service ones exist. */
function sharedEmbeddedDatabase(
  config: CommonConfig,
  services: string[],
  logger: Logger,
): SharedEmbeddedPostgres | undefined {
  if (config.DATABASE_URL) return undefined;
  const layout = embeddedLayout(config.DATA_DIR, services);
  if (layout.kind === 'shared') return new SharedEmbeddedPostgres(layout.dir);
  logger.warn(
    'keeping the embedded databases of an earlier version, one per service (more memory); see README "Upgrading"',
    {
      directories: layout.found,
    },
  );
  return undefined;
}

void main();
