import fs from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { instructions, serviceImage, stages } from '../dockerfile';
import { ROOT } from '../support';

const SERVICES = ['identity', 'transactions', 'prices'];
/** The patches `pnpm install --frozen-lockfile` applies (pnpm-lock.yaml, patchedDependencies). */
const lockfilePatches = Object.values(
  (
    parse(fs.readFileSync(path.join(ROOT, 'pnpm-lock.yaml'), 'utf8')) as {
      patchedDependencies?: Record<string, { path: string }>;
    }
  ).patchedDependencies ?? {},
).map((p) => p.path);
const cliPackage = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages', 'cli', 'package.json'), 'utf8')) as {
  name: string;
  bin: Record<string, string>;
  files: string[];
};
const cliBuild = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages', 'cli', 'tsconfig.build.json'), 'utf8')) as {
  compilerOptions: { rootDir: string; outDir: string };
};

/** Mebibytes of a Kubernetes quantity such as 512Mi or 1Gi. */
const mebibytes = (quantity: string) => {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
};

/** The service's own container in k8s/base/<name>.yaml. */
function kubernetesContainer(name: string) {
  const docs = parseAllDocuments(fs.readFileSync(path.join(ROOT, 'k8s', 'base', `${name}.yaml`), 'utf8')).map(
    (d) => d.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: unknown[] } } } },
  );
  const deployment = docs.find((d) => d.kind === 'Deployment')!;
  const containers = deployment.spec!.template!.spec!.containers as {
    name: string;
    resources: { limits: { memory: string } };
    ports: { name: string; containerPort: number }[];
  }[];
  return containers.find((c) => c.name === name)!;
}

/** The memory limit of the service's own container in k8s/base/<name>.yaml. */
const kubernetesMemoryLimitMi = (name: string) => mebibytes(kubernetesContainer(name).resources.limits.memory);

describe('Dockerfile: one for the three services (read statically: no Docker engine here)', () => {
  it('replaces the per-service Dockerfiles', () => {
    for (const name of SERVICES) expect(fs.existsSync(path.join(ROOT, 'services', name, 'Dockerfile'))).toBe(false);
  });

  it('installs before it reads SERVICE, so the install layers are the same for the three services', () => {
    const build = serviceImage('identity').stage('build')!.instructions;
    const install = build.findIndex((l) => l.startsWith('RUN pnpm install'));
    const serviceArg = build.indexOf('ARG SERVICE');
    expect(install).toBeGreaterThanOrEqual(0);
    expect(serviceArg).toBeGreaterThan(install);
    for (const name of SERVICES)
      expect(serviceImage(name).stage('build')!.instructions.slice(0, serviceArg)).toEqual(build.slice(0, serviceArg));
  });

  it('makes the images of the same layers: they differ only in the stage named after the service (ports, health check)', () => {
    const images = SERVICES.map((name) => ({ name, ...serviceImage(name) }));
    const shared = (image: (typeof images)[number]) =>
      image.chain.filter((s) => s.name !== image.name).flatMap((s) => s.instructions);
    for (const image of images) {
      expect(image.base).toBe(images[0].base);
      expect(image.chain.map((s) => s.name)).toEqual(['runtime', image.name, undefined]);
      expect(shared(image)).toEqual(shared(images[0]));
      const own = image.stage(image.name)!.instructions.map((l) => l.split(' ')[0]);
      expect(own.sort()).toEqual(['EXPOSE', 'HEALTHCHECK']);
    }
  });

  it('fails without SERVICE rather than building something', () => {
    // BuildKit refuses a blank base name ("base name (${SERVICE}) should not be blank")
    expect(stages({}).at(-1)!.from).toBe('');
    expect(instructions().filter((l) => l.startsWith('ARG SERVICE'))).toEqual(['ARG SERVICE', 'ARG SERVICE']);
  });
});

describe.each(SERVICES)('the image of docker build --build-arg SERVICE=%s', (name) => {
  const image = serviceImage(name);
  const finalStage = image.instructions;
  const buildStage = /--from=(\S+)/.exec(finalStage.find((l) => l.startsWith('COPY --from='))!)![1];
  const lines = image.stage(buildStage)!.instructions;

  it('builds the admin CLI beside the service and deploys it with production dependencies only', () => {
    expect(image.stage(buildStage)!.from).toBe(image.base);
    const build = lines.find((l) => l.startsWith('RUN ') && l.includes('run build'));
    expect(build).toContain(`--filter @attest/${name}... --filter ${cliPackage.name} run build`);
    expect(build).toContain(`--filter @attest/${name} deploy --prod /out`);
    expect(build).toContain(`${cliPackage.name} deploy --prod /cli`);
    expect(finalStage).toContain(`COPY --from=${buildStage} --chown=root:root /out /app`);
    expect(lines).toContain('COPY packages ./packages');
  });

  it('copies the patches the lockfile applies before it installs', () => {
    expect(lockfilePatches).toContain('patches/passport-http@0.3.0.patch');
    const install = lines.findIndex((l) => l.startsWith('RUN pnpm install'));
    const copied = lines.slice(0, install).filter((l) => l.startsWith('COPY '));
    for (const patch of lockfilePatches)
      expect(
        copied.some((l) =>
          l
            .split(/\s+/)
            .slice(1, -1)
            .some((src) => patch.startsWith(src.replace(/\/?$/, '/'))),
        ),
      ).toBe(true);
  });

  it('installs the bin the CLI package declares as attest-manage on the PATH of the final image', () => {
    // the CLI's package.json declares the bin; its build (src → dist) produces it; the deploy keeps dist
    const bin = cliPackage.bin['attest-manage'];
    expect(bin).toBe(`${cliBuild.compilerOptions.outDir}/main.js`);
    expect(fs.existsSync(path.join(ROOT, 'packages', 'cli', cliBuild.compilerOptions.rootDir, 'main.ts'))).toBe(true);
    expect(cliPackage.files).toContain(cliBuild.compilerOptions.outDir);
    expect(finalStage).toContain('COPY --from=build --chown=root:root /cli /opt/attest-cli');
    const install = finalStage.find((l) => l.includes('/usr/local/bin/attest-manage'));
    expect(install).toContain(`exec node /opt/attest-cli/${bin} "$@"`);
    expect(install).toContain('chmod 755 /usr/local/bin/attest-manage');
  });

  it('sets the heap limits of docs/deploy.md ("Memory"), the old generation well below the Kubernetes limit', () => {
    const env = finalStage.filter((l) => l.startsWith('ENV ')).join(' ');
    const nodeOptions = /\bNODE_OPTIONS="([^"]*)"/.exec(env)?.[1];
    expect(nodeOptions?.split(' ')).toEqual(['--max-old-space-size=384', '--max-semi-space-size=4']);
    const oldSpaceMb = Number(/--max-old-space-size=(\d+)/.exec(nodeOptions!)![1]);
    // the rest of the process (code, young generation, buffers) needs room beside the old generation
    expect(oldSpaceMb + 96).toBeLessThanOrEqual(kubernetesMemoryLimitMi(name));
    const docs = fs.readFileSync(path.join(ROOT, 'docs', 'deploy.md'), 'utf8');
    expect(docs).toContain(`NODE_OPTIONS="${nodeOptions}"`);
  });

  it('runs the service by default as the node user; `node dist/main.js migrate` is the separate migration step', () => {
    expect(finalStage.filter((l) => l.startsWith('CMD ')).at(-1)).toBe('CMD ["node", "dist/main.js"]');
    expect(finalStage.filter((l) => l.startsWith('ENTRYPOINT '))).toEqual([]);
    expect(finalStage.filter((l) => l.startsWith('USER ')).at(-1)).toBe('USER node');
    expect(fs.readFileSync(path.join(ROOT, 'services', name, 'src', 'main.ts'), 'utf8')).toMatch(
      /^import '\.\/tracing';\n/,
    );
  });

  it('exposes the service’s public and admin ports (those of its Kubernetes container), and checks the public one', () => {
    const ports = kubernetesContainer(name).ports;
    const [http, admin] = ['http', 'admin'].map((p) => ports.find((q) => q.name === p)!.containerPort);
    expect(finalStage.filter((l) => l.startsWith('EXPOSE '))).toEqual([`EXPOSE ${http} ${admin}`]);
    const checks = finalStage.filter((l) => l.startsWith('HEALTHCHECK '));
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatch(/^HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 +CMD node -e /);
    expect(checks[0]).toContain(
      `fetch('http://127.0.0.1:'+(process.env.${name.toUpperCase()}_PORT||${http})+'/healthz')`,
    );
  });
});
