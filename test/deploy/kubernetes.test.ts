import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import fs from 'node:fs';
import os from 'node:os';
import { ConfigError } from '@attest/common';
import { loadPricesConfig } from '../../services/prices/src/config';
import { describeNeeding } from '../../packages/common/test/support/binaries';
import { ROOT } from '../support';

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
} & Record<string, unknown>;

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

const ADMIN_PORTS = [4100, 4101, 4102];
const GATEWAY_API = 'gateway.networking.k8s.io/v1';

function buildDir(dir: string): K8sObject[] {
  const yaml = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(yaml).map((d) => d.toJSON() as K8sObject);
}
const build = (overlay: string) => buildDir(path.join(ROOT, 'k8s', 'overlays', overlay));

type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
type Container = {
  name: string;
  image: string;
  command?: string[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string } }[];
};
type PodSpec = { initContainers?: Container[]; containers: Container[] };
type ParentRef = { group?: string; kind?: string; name: string; namespace?: string; sectionName?: string };
type HttpRoute = K8sObject & {
  spec: {
    parentRefs: ParentRef[];
    hostnames: string[];
    rules: {
      matches: { path: { type: string; value: string } }[];
      backendRefs: { group?: string; kind?: string; name: string; port: number }[];
    }[];
  };
};

/**
 * kubernetes-models has no Gateway API types: the fields the routing relies on, checked by hand (the
 * API server would refuse a Gateway without listeners or a route without parents).
 */
function gatewayApiProblems(object: K8sObject): string[] {
  const problems: string[] = [];
  if (object.apiVersion !== GATEWAY_API)
    problems.push(`${object.kind} ${object.metadata.name}: apiVersion ${object.apiVersion}`);
  if (object.kind === 'Gateway') {
    const spec = object.spec as {
      gatewayClassName?: string;
      listeners?: { name: string; protocol: string; port: number }[];
    };
    if (!spec.gatewayClassName) problems.push('Gateway without gatewayClassName');
    if (!spec.listeners?.length) problems.push('Gateway without listeners');
    for (const l of spec.listeners ?? [])
      if (!l.name || !['HTTP', 'HTTPS'].includes(l.protocol) || !(l.port > 0))
        problems.push(`listener ${JSON.stringify(l)}`);
  } else if (object.kind === 'HTTPRoute') {
    const spec = (object as HttpRoute).spec;
    if (!spec.parentRefs?.length) problems.push(`HTTPRoute ${object.metadata.name} without parentRefs`);
    for (const rule of spec.rules ?? [])
      for (const m of rule.matches ?? [])
        if (!['Exact', 'PathPrefix'].includes(m.path.type) || !m.path.value.startsWith('/'))
          problems.push(`match ${JSON.stringify(m)}`);
  } else problems.push(`unexpected kind ${object.kind}`);
  return problems;
}

/** The environment a container sees: its ConfigMaps' data, then its env (secrets as placeholders). */
function containerEnv(container: Container, objects: K8sObject[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const map = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name === from.configMapRef?.name,
    ) as unknown as { data: Record<string, string> };
    Object.assign(env, map.data);
  }
  const placeholders: Record<string, string> = {
    DATABASE_URL: 'postgres://attest:secret@postgres:5432/attest',
    REDIS_URL: 'redis://redis:6379',
  };
  for (const v of container.env ?? [])
    env[v.name] = v.value ?? placeholders[v.name] ?? `secret-${v.valueFrom?.secretKeyRef?.key}-${'x'.repeat(32)}`;
  return env;
}

/** kustomize wraps long base64 values over lines, which the API server's decoder ignores; the schema's byte format does not. */
function unwrapSecretData(object: K8sObject): K8sObject {
  if (object.kind !== 'Secret' || !object.data) return object;
  const data = Object.fromEntries(
    Object.entries(object.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, '')]),
  );
  return { ...object, data };
}

type Peer = { podSelector?: object; namespaceSelector?: object; ipBlock?: object };
type NetworkPolicyObject = {
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    ingress: { from?: Peer[]; ports?: { protocol?: string; port: string | number }[] }[];
  };
};

/** The pods of the Gateway "attest" in the policy's namespace (the Gateway API's label, GEP-1762). */
const GATEWAY_PEER = { podSelector: { matchLabels: { 'gateway.networking.k8s.io/gateway-name': 'attest' } } };
const ADMIN_PEERS = [
  { podSelector: { matchLabels: { 'app.kubernetes.io/part-of': 'attest', 'app.kubernetes.io/component': 'service' } } },
  { podSelector: { matchLabels: { 'attest/admin-client': 'true' } } },
  {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
  },
];

/**
 * Who may connect to each port. A rule without `from` (everyone), without ports (every port), with an
 * empty selector (every pod or namespace) or an ipBlock (pod addresses are anyone's) is refused here.
 */
function peersByPort(policy: NetworkPolicyObject): Record<string, Peer[]> {
  const byPort: Record<string, Peer[]> = {};
  for (const rule of policy.spec.ingress) {
    expect(rule.from?.length).toBeGreaterThan(0);
    expect(rule.ports?.length).toBeGreaterThan(0);
    for (const peer of rule.from!) {
      expect(peer.ipBlock).toBeUndefined();
      for (const selector of [peer.podSelector, peer.namespaceSelector])
        if (selector) expect(Object.keys(selector).length).toBeGreaterThan(0);
      expect(peer.podSelector).toBeDefined();
    }
    for (const { protocol, port } of rule.ports!) {
      expect(protocol ?? 'TCP').toBe('TCP');
      (byPort[String(port)] ??= []).push(...rule.from!);
    }
  }
  return byPort;
}

describeNeeding(['kubectl'], 'kubernetes manifests', () => {
  describe.each(['dev', 'prod'])('overlay %s', (overlay) => {
    let objects: K8sObject[] = [];
    beforeAll(() => {
      objects = build(overlay);
    });
    const of = (kind: string) => objects.filter((o) => o.kind === kind);
    const deployments = () =>
      of('Deployment') as unknown as {
        metadata: { name: string };
        spec: {
          replicas: number;
          template: {
            spec: Record<string, unknown> & {
              containers: Record<string, unknown>[];
              securityContext: Record<string, unknown>;
            };
          };
        };
      }[];

    it('builds objects that validate against the Kubernetes schemas', () => {
      expect(objects.length).toBeGreaterThan(10);
      for (const object of objects) {
        expect(object.metadata.namespace).toBe(overlay === 'dev' ? 'attest-dev' : 'attest');
        if (object.apiVersion.startsWith('gateway.networking.k8s.io/')) {
          expect(gatewayApiProblems(object)).toEqual([]);
          continue;
        }
        const Model = MODELS[`${object.apiVersion}/${object.kind}`];
        expect({ kind: `${object.apiVersion}/${object.kind}`, known: Boolean(Model) }).toEqual({
          kind: `${object.apiVersion}/${object.kind}`,
          known: true,
        });
        expect(() => new Model(unwrapSecretData(object) as never).validate()).not.toThrow();
      }
    });

    it('runs each service with 2+ replicas, probes, limits, non-root, read-only root, no service-account token', () => {
      expect(
        deployments()
          .map((d) => d.metadata.name)
          .sort(),
      ).toEqual(['identity', 'prices', 'transactions']);
      for (const d of deployments()) {
        const pod = d.spec.template.spec;
        expect(d.spec.replicas).toBeGreaterThanOrEqual(2);
        expect(pod.automountServiceAccountToken).toBe(false);
        expect(pod.securityContext.runAsNonRoot).toBe(true);
        for (const c of pod.containers as {
          readinessProbe?: { httpGet: { path: string } };
          livenessProbe?: { httpGet: { path: string } };
          resources: { requests?: object; limits?: { cpu?: string; memory?: string } };
          securityContext: Record<string, unknown>;
        }[]) {
          expect(c.readinessProbe?.httpGet.path).toBe('/readyz');
          expect(c.livenessProbe?.httpGet.path).toBe('/healthz');
          expect(c.resources.requests).toBeDefined();
          expect(c.resources.limits?.cpu).toBeDefined();
          expect(c.resources.limits?.memory).toBeDefined();
          expect(c.securityContext).toMatchObject({
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          });
        }
      }
    });

    it('drains on shutdown: /readyz 503 and still serving for SHUTDOWN_DELAY_MS, within the grace period', () => {
      const config = (of('ConfigMap')[0] as unknown as { data: Record<string, string> }).data;
      const delayMs = Number(config.SHUTDOWN_DELAY_MS);
      const timeoutMs = Number(config.SHUTDOWN_TIMEOUT_MS ?? 4000);
      expect(delayMs).toBeGreaterThanOrEqual(5000);
      for (const d of deployments()) {
        type Pod = { terminationGracePeriodSeconds?: number; containers: { lifecycle?: { preStop?: unknown } }[] };
        const pod = d.spec.template.spec as Pod;
        // a preStop hook would run before SIGTERM and count against the grace period too
        const preStop = pod.containers.map((c) => c.lifecycle?.preStop);
        expect({ name: d.metadata.name, preStop }).toEqual({ name: d.metadata.name, preStop: [undefined] });
        // at least 5 s beyond the drain, to close pools and flush logs
        expect((pod.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThanOrEqual(delayMs + timeoutMs + 5000);
      }
    });

    it('autoscales and protects each service from disruption', () => {
      const names = (kind: string) =>
        of(kind)
          .map((o) => (o.spec as { scaleTargetRef?: { name: string } }).scaleTargetRef?.name ?? o.metadata.name)
          .sort();
      expect(names('HorizontalPodAutoscaler')).toEqual(['identity', 'prices', 'transactions']);
      expect(names('PodDisruptionBudget')).toEqual(['identity', 'prices', 'transactions']);
    });

    it('routes the three public hosts with Gateway API HTTPRoutes to http ports only — never an admin port', () => {
      const routes = of('HTTPRoute') as HttpRoute[];
      const gateways = of('Gateway');
      expect(routes.map((r) => r.metadata.name).sort()).toEqual(['identity', 'prices', 'transactions']);
      expect(gateways.map((g) => g.metadata.name)).toEqual(['attest']);
      const config = of('ConfigMap')[0] as unknown as { data: Record<string, string> };
      const hostOf = {
        identity: config.data.BASE_URL,
        transactions: config.data.API_URL,
        prices: config.data.PRICES_URL,
      };
      for (const route of routes) {
        expect(route.apiVersion).toBe(GATEWAY_API);
        expect(route.spec.parentRefs).toEqual([{ name: 'attest' }]);
        expect(route.spec.hostnames).toEqual([new URL(hostOf[route.metadata.name as keyof typeof hostOf]).hostname]);
        for (const rule of route.spec.rules)
          for (const ref of rule.backendRefs) {
            // a real Service of the overlay, on the port named http (never the admin port)
            const service = of('Service').find((s) => s.metadata.name === ref.name) as unknown as
              { spec: { ports: { name: string; port: number }[] } } | undefined;
            expect({ route: route.metadata.name, backend: ref.name, found: Boolean(service) }).toEqual({
              route: route.metadata.name,
              backend: route.metadata.name,
              found: true,
            });
            expect(ref.kind ?? 'Service').toBe('Service');
            expect(service!.spec.ports.find((p) => p.port === ref.port)?.name).toBe('http');
            expect(ADMIN_PORTS).not.toContain(ref.port);
          }
      }
      const paths = Object.fromEntries(
        routes.map((r) => [
          r.metadata.name,
          r.spec.rules.flatMap((rule) => rule.matches.map((m) => `${m.path.type} ${m.path.value}`)),
        ]),
      );
      expect(paths).toEqual({
        identity: ['PathPrefix /'],
        // /pay/: the customer's payment page (issue 44); /x402/: the x402 facilitator (issue 43)
        transactions: [
          'PathPrefix /api/',
          'PathPrefix /x402/',
          'PathPrefix /pay/',
          'Exact /openapi.json',
          'PathPrefix /docs',
        ],
        prices: ['PathPrefix /public/', 'Exact /openapi.json', 'PathPrefix /docs'],
      });
      // no admin port anywhere in the routing, by number or by name
      expect(JSON.stringify([...routes, ...gateways])).not.toMatch(/410[0-2]|admin/);
    });

    it('has no Ingress (an option: k8s/components/ingress) and no snippet annotation anywhere', () => {
      expect(of('Ingress')).toEqual([]);
      const annotations = objects.flatMap((o) =>
        Object.keys((o.metadata as { annotations?: Record<string, string> }).annotations ?? {}),
      );
      expect(annotations.filter((a) => /snippet/i.test(a))).toEqual([]);
    });

    it('migrates in an init container (node dist/main.js migrate, same image and environment), not at service start', () => {
      for (const d of deployments()) {
        const pod = d.spec.template.spec as unknown as PodSpec;
        const [main] = pod.containers;
        expect(pod.initContainers?.map((c) => ({ name: c.name, image: c.image, command: c.command }))).toEqual([
          { name: 'migrate', image: main.image, command: ['node', 'dist/main.js', 'migrate'] },
        ]);
        const init = pod.initContainers![0];
        expect({ env: init.env, envFrom: init.envFrom }).toEqual({ env: main.env, envFrom: main.envFrom });
        expect(containerEnv(main, objects).MIGRATE_ON_START).toBe('false');
      }
    });

    it(
      overlay === 'dev'
        ? 'serves the seed prices, allowed explicitly with the in-cluster database'
        : 'runs the http and fx price feeds, the API key header from the Secret',
      () => {
        const prices = deployments().find((d) => d.metadata.name === 'prices')!.spec.template
          .spec as unknown as PodSpec;
        for (const container of [...prices.initContainers!, ...prices.containers]) {
          const env = containerEnv(container, objects);
          // the configuration the service itself checks at start: it must accept it
          expect(() => loadPricesConfig(env)).not.toThrow();
          const config = loadPricesConfig(env);
          if (overlay === 'dev')
            expect({ feeds: config.PRICE_FEEDS, allowSeed: config.PRICE_FEEDS_ALLOW_SEED }).toEqual({
              feeds: 'seed',
              allowSeed: true,
            });
          else {
            expect(config).toMatchObject({
              PRICE_FEEDS: 'http,fx',
              PRICE_FEEDS_ALLOW_SEED: false,
              PRICE_HTTP_HEADER_NAME: 'x-cg-demo-api-key',
            });
            expect(new URL(config.PRICE_HTTP_URL!).protocol).toBe('https:');
            expect(new URL(config.FX_HTTP_URL!).protocol).toBe('https:');
            expect(container.env?.find((v) => v.name === 'PRICE_HTTP_HEADER_VALUE')).toEqual({
              name: 'PRICE_HTTP_HEADER_VALUE',
              valueFrom: { secretKeyRef: { name: 'attest-secrets', key: 'PRICE_HTTP_HEADER_VALUE' } },
            });
          }
        }
      },
    );

    it('lets only the gateway reach the public ports, and only the services, admin clients and Prometheus the admin ports', () => {
      const [policy, ...others] = of('NetworkPolicy') as unknown as NetworkPolicyObject[];
      expect(others).toEqual([]);
      expect(policy.spec.podSelector.matchLabels).toEqual({
        'app.kubernetes.io/part-of': 'attest',
        'app.kubernetes.io/component': 'service',
      });
      expect(policy.spec.policyTypes).toEqual(['Ingress']);
      expect(peersByPort(policy)).toEqual({ http: [GATEWAY_PEER], admin: ADMIN_PEERS });
      // TRUST_PROXY believes one hop: safe only because no other peer reaches the public port
      expect((of('ConfigMap')[0] as unknown as { data: Record<string, string> }).data.TRUST_PROXY).toBe('1');
      // the Gateway the peer names is the one the routes attach to
      expect(of('Gateway').map((g) => g.metadata.name)).toEqual(['attest']);
    });

    it(
      overlay === 'dev'
        ? 'runs Postgres and Redis as StatefulSets in the cluster'
        : 'points at external Postgres and Redis',
      () => {
        if (overlay === 'dev')
          expect(
            of('StatefulSet')
              .map((s) => s.metadata.name)
              .sort(),
          ).toEqual(['postgres', 'redis']);
        else {
          expect(of('StatefulSet')).toEqual([]);
          const external = of('Service').filter((s) => (s.spec as { type?: string }).type === 'ExternalName');
          expect(external.map((s) => s.metadata.name).sort()).toEqual(['postgres', 'redis']);
          expect(of('Secret')).toEqual([]);
        }
      },
    );
  });
});

describeNeeding(['kubectl'], 'kubernetes base and options', () => {
  it('the base sets no price feeds: with its database, the prices default (seed) would refuse to start', () => {
    const base = buildDir(path.join(ROOT, 'k8s', 'base'));
    const config = base.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
    expect(config.data.PRICE_FEEDS).toBeUndefined();
    expect(() =>
      loadPricesConfig({ ...config.data, DATABASE_URL: 'postgres://attest:secret@postgres:5432/attest' }),
    ).toThrow(ConfigError);
  });

  it('the optional Ingress component: valid, http ports only, no snippet annotations, its controller admitted', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-k8s-'));
    fs.writeFileSync(
      path.join(dir, 'kustomization.yaml'),
      // kustomize takes relative paths only
      `resources: [${path.relative(dir, path.join(ROOT, 'k8s', 'overlays', 'prod'))}]\ncomponents: [${path.relative(dir, path.join(ROOT, 'k8s', 'components', 'ingress'))}]\n`,
    );
    const built = buildDir(dir);
    const [ingress] = built.filter((o) => o.kind === 'Ingress');
    expect(() => new Ingress(ingress as never).validate()).not.toThrow();
    expect(
      Object.keys((ingress.metadata as { annotations?: object }).annotations ?? {}).filter((a) => /snippet/i.test(a)),
    ).toEqual([]);
    const backends = (
      ingress.spec as {
        rules: {
          http: { paths: { backend: { service: { name: string; port: { name?: string; number?: number } } } }[] };
        }[];
      }
    ).rules.flatMap((r) => r.http.paths.map((p) => p.backend.service));
    expect(new Set(backends.map((b) => `${b.name}:${b.port.name}`))).toEqual(
      new Set(['identity:http', 'transactions:http', 'prices:http']),
    );
    // the Ingress controller's pods (and the gateway's) reach the public ports; nothing else changes
    const [policy] = built.filter((o) => o.kind === 'NetworkPolicy') as unknown as NetworkPolicyObject[];
    expect(() => new NetworkPolicy(policy as never).validate()).not.toThrow();
    expect(peersByPort(policy)).toEqual({
      http: [
        GATEWAY_PEER,
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
          podSelector: {
            matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx', 'app.kubernetes.io/component': 'controller' },
          },
        },
      ],
      admin: ADMIN_PEERS,
    });
  });
});
