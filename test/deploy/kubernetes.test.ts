import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { describeNeeding } from '../../packages/common/test/support/binaries';
import { ROOT } from '../support';

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; spec?: Record<string, unknown> } & Record<string, unknown>;

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

function build(overlay: string): K8sObject[] {
  const yaml = execFileSync('kubectl', ['kustomize', path.join(ROOT, 'k8s', 'overlays', overlay)], { encoding: 'utf8' });
  return parseAllDocuments(yaml).map((d) => d.toJSON() as K8sObject);
}

/** kustomize wraps long base64 values over lines, which the API server's decoder ignores; the schema's byte format does not. */
function unwrapSecretData(object: K8sObject): K8sObject {
  if (object.kind !== 'Secret' || !object.data) return object;
  const data = Object.fromEntries(Object.entries(object.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, '')]));
  return { ...object, data };
}

describeNeeding(['kubectl'], 'kubernetes manifests', () => {
describe.each(['dev', 'prod'])('overlay %s', (overlay) => {
  let objects: K8sObject[] = [];
  beforeAll(() => {
    objects = build(overlay);
  });
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  const deployments = () => of('Deployment') as unknown as {
    metadata: { name: string };
    spec: { replicas: number; template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[]; securityContext: Record<string, unknown> } } };
  }[];

  it('builds objects that validate against the Kubernetes schemas', () => {
    expect(objects.length).toBeGreaterThan(10);
    for (const object of objects) {
      const Model = MODELS[`${object.apiVersion}/${object.kind}`];
      expect({ kind: `${object.apiVersion}/${object.kind}`, known: Boolean(Model) }).toEqual({ kind: `${object.apiVersion}/${object.kind}`, known: true });
      expect(() => new Model(unwrapSecretData(object) as never).validate()).not.toThrow();
      expect(object.metadata.namespace).toBe(overlay === 'dev' ? 'attest-dev' : 'attest');
    }
  });

  it('runs each service with 2+ replicas, probes, limits, non-root, read-only root, no service-account token', () => {
    expect(deployments().map((d) => d.metadata.name).sort()).toEqual(['identity', 'prices', 'transactions']);
    for (const d of deployments()) {
      const pod = d.spec.template.spec;
      expect(d.spec.replicas).toBeGreaterThanOrEqual(2);
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      for (const c of pod.containers as { readinessProbe?: { httpGet: { path: string } }; livenessProbe?: { httpGet: { path: string } }; resources: { requests?: object; limits?: { cpu?: string; memory?: string } }; securityContext: Record<string, unknown> }[]) {
        expect(c.readinessProbe?.httpGet.path).toBe('/readyz');
        expect(c.livenessProbe?.httpGet.path).toBe('/healthz');
        expect(c.resources.requests).toBeDefined();
        expect(c.resources.limits?.cpu).toBeDefined();
        expect(c.resources.limits?.memory).toBeDefined();
        expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
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
    const names = (kind: string) => of(kind).map((o) => (o.spec as { scaleTargetRef?: { name: string } }).scaleTargetRef?.name ?? o.metadata.name).sort();
    expect(names('HorizontalPodAutoscaler')).toEqual(['identity', 'prices', 'transactions']);
    expect(names('PodDisruptionBudget')).toEqual(['identity', 'prices', 'transactions']);
  });

  it('routes the three public hosts to http ports only — never an admin port', () => {
    const [ingress] = of('Ingress') as unknown as { spec: { rules: { host: string; http: { paths: { backend: { service: { name: string; port: { name?: string; number?: number } } } }[] } }[] } }[];
    expect(ingress.spec.rules).toHaveLength(3);
    for (const rule of ingress.spec.rules)
      for (const p of rule.http.paths) {
        expect(p.backend.service.port.name).toBe('http');
        expect(ADMIN_PORTS).not.toContain(p.backend.service.port.number);
      }
    const hosts = ingress.spec.rules.map((r) => r.host);
    const config = of('ConfigMap')[0] as unknown as { data: Record<string, string> };
    expect(hosts).toEqual([new URL(config.data.BASE_URL).host, new URL(config.data.API_URL).host, new URL(config.data.PRICES_URL).host]);
  });

  it('lets admin ports be reached only from inside the namespace', () => {
    const [policy] = of('NetworkPolicy') as unknown as { spec: { podSelector: { matchLabels: Record<string, string> }; ingress: { from?: { podSelector?: object; namespaceSelector?: object; ipBlock?: object }[]; ports: { port: string }[] }[] } }[];
    expect(policy.spec.podSelector.matchLabels['app.kubernetes.io/component']).toBe('service');
    const adminRules = policy.spec.ingress.filter((r) => r.ports.some((p) => p.port === 'admin'));
    expect(adminRules).toHaveLength(1);
    expect(adminRules[0].from).toEqual([{ podSelector: {} }]);
    const openRules = policy.spec.ingress.filter((r) => !r.from);
    expect(openRules.flatMap((r) => r.ports.map((p) => p.port))).toEqual(['http']);
  });

  it(overlay === 'dev' ? 'runs Postgres and Redis as StatefulSets in the cluster' : 'points at external Postgres and Redis', () => {
    if (overlay === 'dev') expect(of('StatefulSet').map((s) => s.metadata.name).sort()).toEqual(['postgres', 'redis']);
    else {
      expect(of('StatefulSet')).toEqual([]);
      const external = of('Service').filter((s) => (s.spec as { type?: string }).type === 'ExternalName');
      expect(external.map((s) => s.metadata.name).sort()).toEqual(['postgres', 'redis']);
      expect(of('Secret')).toEqual([]);
    }
  });
});
});
