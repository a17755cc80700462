/** Options of `pnpm bench`, from flags and BENCH_* environment variables (flags win). See bench/README.md. */
export interface BenchOptions {
  /** Measured seconds per repetition. */
  seconds: number;
  /** Warm-up seconds before each repetition (not counted). */
  warmupSeconds: number;
  repetitions: number;
  connections: number;
  /** Only the embedded rows (no Postgres + Redis servers needed). */
  embeddedOnly: boolean;
  /** Only the Postgres + Redis rows (no `pnpm start`). */
  realOnly: boolean;
  /** Run only scenarios whose key or name contains one of these (case-insensitive). */
  scenarios: string[];
  /** The 60-s memory soak on real Postgres + Redis. */
  memory: boolean;
  memorySeconds: number;
  /** 1,000 vs 1,000,000 transactions and 100 vs 1,000,000 quotes. */
  growth: boolean;
  /** Only the growth rows (no scenarios, no oidc-provider). */
  growthOnly: boolean;
  growthLarge: number;
  /** Repetitions of each growth row (its two sizes measured in turn). */
  growthRepetitions: number;
  /** Distinct transactions for the cache-miss lookup. */
  missSet: number;
  /** Real Postgres server (a database of this name is dropped and recreated). */
  postgresUrl: string;
  databaseName: string;
  /** LOG_LEVEL for our services; unset = their default, as `pnpm start` runs. */
  logLevel?: string;
  /** Write results under bench/results/ (off: print only). */
  write: boolean;
}

const USAGE = `pnpm bench [--seconds N] [--warmup N] [--repetitions N] [--connections N] [--embedded-only | --real-only]
           [--scenario NAME]... [--memory] [--growth | --growth-only] [--growth-large N] [--no-write]
--growth-large N: the large growth size (1000000): N transactions, N extra quotes, N users, N sessions, N/10 apps.
Environment: BENCH_SECONDS, BENCH_WARMUP, BENCH_REPETITIONS, BENCH_CONNECTIONS, BENCH_EMBEDDED_ONLY=1, BENCH_REAL_ONLY=1,
BENCH_SCENARIO=a,b, BENCH_MEMORY=1, BENCH_MEMORY_SECONDS, BENCH_GROWTH=1, BENCH_GROWTH_ONLY=1, BENCH_GROWTH_LARGE,
BENCH_GROWTH_REPETITIONS (5), BENCH_MISS_SET,
BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/postgres), BENCH_DATABASE (attest_bench), BENCH_LOG_LEVEL.`;

function positive(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number ≥ ${min} (got ${raw})\n${USAGE}`);
  return n;
}

const flag = (env: NodeJS.ProcessEnv, name: string) => ['1', 'true', 'yes'].includes((env[name] ?? '').toLowerCase());

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const values = new Map<string, string>();
  const scenarios = (env.BENCH_SCENARIO ?? '').split(',').filter(Boolean);
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') continue;
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    const [key, inline] = arg.split('=', 2);
    if (['--embedded-only', '--real-only', '--memory', '--growth', '--growth-only', '--no-write'].includes(key)) {
      switches.add(key);
    } else if (
      ['--seconds', '--warmup', '--repetitions', '--connections', '--scenario', '--growth-large'].includes(key)
    ) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new Error(`${key} needs a value\n${USAGE}`);
      if (key === '--scenario') scenarios.push(...value.split(',').filter(Boolean));
      else values.set(key, value);
    } else {
      throw new Error(`unknown option ${arg}\n${USAGE}`);
    }
  }
  const databaseName = env.BENCH_DATABASE ?? 'attest_bench';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(databaseName))
    throw new Error(`BENCH_DATABASE must be a plain lower-case name (got ${databaseName})`);
  const embeddedOnly = switches.has('--embedded-only') || flag(env, 'BENCH_EMBEDDED_ONLY');
  const realOnly = switches.has('--real-only') || flag(env, 'BENCH_REAL_ONLY');
  if (embeddedOnly && realOnly) throw new Error(`--embedded-only and --real-only exclude each other\n${USAGE}`);
  const growthOnly = switches.has('--growth-only') || flag(env, 'BENCH_GROWTH_ONLY');
  if (growthOnly && scenarios.length) throw new Error(`--growth-only runs no scenario; drop --scenario\n${USAGE}`);
  return {
    seconds: positive('--seconds', values.get('--seconds') ?? env.BENCH_SECONDS, 10),
    warmupSeconds: positive('--warmup', values.get('--warmup') ?? env.BENCH_WARMUP, 2, 0),
    repetitions: Math.round(positive('--repetitions', values.get('--repetitions') ?? env.BENCH_REPETITIONS, 3)),
    connections: Math.round(positive('--connections', values.get('--connections') ?? env.BENCH_CONNECTIONS, 32)),
    embeddedOnly,
    realOnly,
    scenarios: scenarios.map((s) => s.toLowerCase()),
    memory: switches.has('--memory') || flag(env, 'BENCH_MEMORY'),
    memorySeconds: positive('BENCH_MEMORY_SECONDS', env.BENCH_MEMORY_SECONDS, 60, 2),
    growth: growthOnly || switches.has('--growth') || flag(env, 'BENCH_GROWTH'),
    growthOnly,
    growthRepetitions: Math.round(positive('BENCH_GROWTH_REPETITIONS', env.BENCH_GROWTH_REPETITIONS, 5)),
    growthLarge: Math.round(
      positive('--growth-large', values.get('--growth-large') ?? env.BENCH_GROWTH_LARGE, 1_000_000, 1000),
    ),
    missSet: Math.round(positive('BENCH_MISS_SET', env.BENCH_MISS_SET, 300_000, 1000)),
    postgresUrl: env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    databaseName,
    logLevel: env.BENCH_LOG_LEVEL || undefined,
    write: !switches.has('--no-write'),
  };
}
