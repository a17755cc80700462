import fs from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
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

/** Dockerfile instructions, continuation lines joined, comments dropped. */
function instructions(file: string): string[] {
  return fs
    .readFileSync(file, 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'));
}

/** Mebibytes of a Kubernetes quantity such as 512Mi or 1Gi. */
const mebibytes = (quantity: string) => {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
};

/** The memory limit of the service's own container in k8s/base/<name>.yaml. */
function kubernetesMemoryLimitMi(name: string): number {
  const docs = parseAllDocuments(fs.readFileSync(path.join(ROOT, 'k8s', 'base', `${name}.yaml`), 'utf8')).map(
    (d) => d.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: unknown[] } } } },
  );
  const deployment = docs.find((d) => d.kind === 'Deployment')!;
  const containers = deployment.spec!.template!.spec!.containers as {
    name: string;
    resources: { limits: { memory: string } };
  }[];
  return mebibytes(containers.find((c) => c.name === name)!.resources.limits.memory);
}

describe.each(SERVICES)('services/%s/Dockerfile (read statically: no Docker engine here)', (name) => {
  const lines = instructions(path.join(ROOT, 'services', name, 'Dockerfile'));
  const finalStage = lines.slice(lines.findLastIndex((l) => l.startsWith('FROM ')));

  it('builds the admin CLI beside the service and deploys it with production dependencies only', () => {
    const build = lines.find((l) => l.startsWith('RUN ') && l.includes('run build'));
    expect(build).toContain(`--filter @attest/${name}...`);
    expect(build).toContain(`--filter ${cliPackage.name} run build`);
    expect(build).toContain(`${cliPackage.name} deploy --prod /cli`);
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

  it('runs the service by default; `node dist/main.js migrate` is the separate migration step', () => {
    expect(finalStage[finalStage.length - 1]).toBe('CMD ["node", "dist/main.js"]');
    expect(fs.readFileSync(path.join(ROOT, 'services', name, 'src', 'main.ts'), 'utf8')).toMatch(
      /^import '\.\/tracing';\n/,
    );
  });
});
