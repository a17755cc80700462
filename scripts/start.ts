/**
 * `pnpm start`: the three services in one process for local use (each is also deployable on its
 * own via its main.ts). Embedded Postgres and the in-process cache unless DATABASE_URL / REDIS_URL are set;
 * the embedded Postgres is one for the three (each in its own schema), in DATA_DIR/pg.
 */
// first: with OTEL_EXPORTER_OTLP_ENDPOINT set, the three services trace as one process, "attest"
import './start-tracing';
import path from 'node:path';
import {
  collectWhenIdle,
  limitHeapGrowth,
  ConfigError,
  createLogger,
  embeddedLayout,
  handleProcessSignals,
  resolveAdminToken,
  resolveLogFormat,
  SharedEmbeddedPostgres,
  startService,
  type CommonConfig,
  type Logger,
  type RunningService,
} from '@attest/common';
import { loadDemoConfig } from '../apps/demo/src/config';
import { startDemo, type RunningDemo } from '../apps/demo/src/demo';
import { demoOwner } from '../apps/demo/src/demo-owner';
import { identityService, identityServiceWith } from '../services/identity/src/main';
import { transactionsService } from '../services/transactions/src/main';
import { pricesService } from '../services/prices/src/main';

// pnpm's shell, whose going away (pnpm killed on its own) stops the services: seen before start-up
const launcher = process.ppid;

async function main(): Promise<void> {
  // the old generation grows by half over what a full collection kept, not up to four times: pnpm start's peak
  // under load (the bench's cache-miss lookups) went from ~390 to ~310 MB, the rows' rates unchanged
  limitHeapGrowth();
  // a terminal or pipe that went away (the launcher killed) must not turn the orderly stop into a crash
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  const services = [identityService, transactionsService, pricesService] as const;
  // one readable line per request and event on a terminal, JSON lines otherwise (LOG_FORMAT overrides)
  const env = process.env.LOG_FORMAT ? process.env : { ...process.env, LOG_FORMAT: 'auto' };
  let configs;
  let demoConfig;
  try {
    configs = [
      identityService.loadConfig(env),
      transactionsService.loadConfig(env),
      pricesService.loadConfig(env),
    ] as const;
    demoConfig = loadDemoConfig(env);
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.message : (err as Error).message}\n`);
    process.exit(1);
  }
  const logger = createLogger(
    'attest',
    configs[0].LOG_LEVEL,
    resolveLogFormat(configs[0].LOG_FORMAT ?? 'auto', process.stdout.isTTY),
  );
  // the walk-through's alice (DEMO_OWNER_USERNAME), once an operator creates her, owns the demo app
  const owner = demoConfig.DEMO_ENABLED ? demoOwner(demoConfig.DEMO_OWNER_USERNAME, logger) : undefined;
  const identity = owner
    ? identityServiceWith({ onOperatorCreatedUser: owner.onOperatorCreatedUser })
    : identityService;
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
        startService(identity, configs[0], { sharedDatabase }),
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
      await owner?.demoStarted(demo.appId);
    }
  };
  const starting: { up?: Promise<void> } = {};
  // From here on, one Ctrl-C reaches this process once from the terminal and possibly again from a
  // launcher: the duplicate is no force quit; and if pnpm is killed on its own, the services stop with
  // it. A signal during start-up lets the start finish (the embedded database mid-creation), then stops.
  // Installed before the start-up begins: its first steps (creating the embedded database's directory,
  // spawning initdb) run before it first waits, and a signal then would meet no handler and kill the
  // program half-way.
  handleProcessSignals(
    logger,
    async () => {
      await starting.up?.catch(() => undefined);
      await stopAll();
    },
    { exitWithParent: launcher },
  );
  const startingUp = (starting.up = startUp());
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
          ...(owner
            ? [
                `  ${''.padEnd(13)} ${''.padEnd(24)} its owner in the portal: the user ${demoConfig.DEMO_OWNER_USERNAME} once you create them (DEMO_OWNER_USERNAME)`,
              ]
            : []),
        ]
      : []),
    ...(configs[0].portal.enabled
      ? [
          `  ${'portal'.padEnd(13)} ${`${started[0].publicUrl}/portal`.padEnd(24)} the developer portal: sign in with Attest to run the apps you belong to`,
        ]
      : []),
    '',
    configs[0].DATABASE_URL ? '' : `Data lives in ${dataDir} (delete it to start afresh).`,
    'Manage apps, users, transactions and prices with, for example:',
    '  pnpm --silent manage app create --name "My app" --redirect-uri http://localhost:3000/callback',
    '  pnpm --silent manage user create --username alice --password "correct horse battery" --verification-level orb',
    '  pnpm --silent manage app add-member --app-id APP_ID --username alice --role owner   # then alice sees the app in the portal',
    'Every command: pnpm manage --help.',
    'Press Ctrl-C to stop.',
    '',
  ];
  process.stdout.write(lines.filter((l, i) => l !== '' || i === 0 || lines[i - 1] !== '').join('\n') + '\n');
  // once start-up (or later load) is over and the program idles, V8's grown young generation is given
  // back: ~30 MB of an idle pnpm start (bench/README.md, "What the memory profile of `pnpm start` found")
  collectWhenIdle();
}

/** One embedded Postgres for the three services; none with DATABASE_URL, or when an earlier version's per-service ones exist. */
function sharedEmbeddedDatabase(
  config: CommonConfig,
  services: string[],
  logger: Logger,
): SharedEmbeddedPostgres | undefined {
  if (config.DATABASE_URL) return undefined;
  const layout = embeddedLayout(config.DATA_DIR, services);
  if (layout.kind === 'shared') return new SharedEmbeddedPostgres(layout.dir, logger);
  logger.warn(
    'keeping the embedded databases of an earlier version, one per service (more memory); see README "Upgrading"',
    {
      directories: layout.found,
    },
  );
  return undefined;
}

void main();
