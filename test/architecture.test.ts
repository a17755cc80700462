// The layout rules of docs/architecture.md, checked on the real tree: the dependency rules that `pnpm lint`
// applies (dependency-cruiser, .dependency-cruiser.cjs) refuse a planted forbidden import of each kind; no
// source file is over 400 lines; no type of more than 10 members is handed to a function that mounts routes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from './support';

const DEPCRUISE = path.join(ROOT, 'node_modules', '.bin', 'depcruise');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const SOURCE_ROOTS = ['services', 'packages', 'apps'];
const MAX_LINES = 400;
const MAX_DEPS_MEMBERS = 10;

/** Every .ts file under <root>/<name>/src, relative to the repository root. */
function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) files.push(path.relative(ROOT, full));
    }
  };
  for (const top of SOURCE_ROOTS) {
    for (const name of fs.readdirSync(path.join(ROOT, top))) {
      const src = path.join(ROOT, top, name, 'src');
      if (fs.existsSync(src)) walk(src);
    }
  }
  return files.sort();
}

/** A throwaway tree shaped like the repository (services/<name>/src/…) with the given files. */
function plant(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-boundaries-'));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'commonjs', target: 'es2022', strict: true } }),
  );
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/** Runs the dependency rules of `pnpm lint` over a planted tree: exit code and the rules it names. */
function cruise(dir: string): { code: number | null; rules: string[]; output: string } {
  const run = spawnSync(DEPCRUISE, ['--config', CONFIG, '--output-type', 'err', 'services', 'packages'], {
    cwd: dir,
    encoding: 'utf8',
  });
  const output = `${run.stdout}${run.stderr}`;
  const rules = [...output.matchAll(/error ([a-z-]+):/g)].map((m) => m[1]);
  return { code: run.status, rules: [...new Set(rules)].sort(), output };
}

// A lawful service: a kernel, two features entered through their index, a composition root.
const LAWFUL = {
  'services/shop/src/config.ts': 'export const config = { port: 1 };\n',
  'services/shop/src/kernel/ids.ts': "import { config } from '../config';\nexport const id = () => config.port;\n",
  'services/shop/src/orders/store.ts': "import { id } from '../kernel/ids';\nexport const load = () => id();\n",
  'services/shop/src/orders/index.ts': "export { load } from './store';\n",
  'services/shop/src/billing/charge.ts': "import { load } from '../orders';\nexport const charge = () => load();\n",
  'services/shop/src/billing/index.ts': "export { charge } from './charge';\n",
  'services/shop/src/app.ts':
    "import { charge } from './billing';\nimport { load } from './orders';\nexport const run = () => charge() + load();\n",
  'packages/kit/src/index.ts': 'export const kit = 1;\n',
};

describe('dependency rules (pnpm lint)', () => {
  const planted: string[] = [];
  afterAll(() => planted.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  const check = (files: Record<string, string>) => {
    const dir = plant({ ...LAWFUL, ...files });
    planted.push(dir);
    return cruise(dir);
  };

  it('let a lawful tree pass', () => {
    const result = check({});
    expect(result.rules).toEqual([]);
    expect(result.code).toBe(0);
  });

  it("refuse a feature importing another feature's internals", () => {
    const result = check({
      'services/shop/src/billing/charge.ts':
        "import { load } from '../orders/store';\nexport const charge = () => load();\n",
    });
    expect(result.rules).toEqual(['feature-internals']);
    expect(result.code).not.toBe(0);
  });

  it('refuse the composition root reaching past a feature index', () => {
    const result = check({
      'services/shop/src/app.ts': "import { load } from './orders/store';\nexport const run = () => load();\n",
    });
    expect(result.rules).toEqual(['root-uses-feature-index']);
  });

  it('refuse the kernel importing a feature', () => {
    const result = check({
      'services/shop/src/kernel/ids.ts': "import { charge } from '../billing';\nexport const id = () => charge();\n",
    });
    // the kernel → billing → orders → kernel loop is a cycle too
    expect(result.rules).toContain('kernel-imports-no-feature');
    expect(result.code).not.toBe(0);
  });

  it('refuse a circular import, also of types only, also inside one feature', () => {
    const result = check({
      'services/shop/src/orders/store.ts':
        "import type { Shape } from './shape';\nexport type Row = { shape?: Shape };\nexport const load = () => 1;\n",
      'services/shop/src/orders/shape.ts': "import type { Row } from './store';\nexport type Shape = { row?: Row };\n",
    });
    expect(result.rules).toEqual(['no-circular']);
  });

  it("refuse one service importing another's source, and a package importing a service", () => {
    const result = check({
      'services/mail/src/app.ts': "import { config } from '../../shop/src/config';\nexport const port = config.port;\n",
      'packages/kit/src/index.ts':
        "import { config } from '../../../services/shop/src/config';\nexport const kit = config;\n",
    });
    expect(result.rules).toEqual(['packages-import-no-service', 'services-are-separate']);
  });
});

describe('the source tree', () => {
  const files = sourceFiles();

  it('has no file over 400 lines', () => {
    const long = files
      .map((file) => ({ file, lines: fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('hands no function that mounts routes a type of more than 10 members', () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      path.join(ROOT, 'tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: () => undefined,
      },
    );
    if (!config) throw new Error('tsconfig.json could not be read');
    const program = ts.createProgram({
      rootNames: files.map((f) => path.join(ROOT, f)),
      options: { ...config.options, noEmit: true },
    });
    const checker = program.getTypeChecker();
    const isRouter = (type: ts.Type) => {
      const symbol = type.aliasSymbol ?? type.getSymbol();
      return symbol?.getName() === 'Router' || checker.typeToString(type) === 'Router';
    };
    // what a route can reach: a class's private and protected members (and #names) are not
    const isPublic = (member: ts.Symbol) =>
      !member.getName().startsWith('#') &&
      !(member.declarations ?? []).some(
        (d) => (ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0,
      );
    // a type of this repository's own (an object, interface or class declared in it): not a primitive, a
    // union with one (a header value), nor a library's type (prom-client's Registry)
    const primitive = ts.TypeFlags.StringLike | ts.TypeFlags.NumberLike | ts.TypeFlags.BooleanLike;
    const ours = (type: ts.Type): boolean => {
      if (type.isUnion()) return type.types.every((t) => (t.flags & primitive) === 0) && type.types.some(ours);
      if (type.isIntersection()) return type.types.some(ours);
      // Pick<Ours, …>, Readonly<Ours>: a library's alias over a type of ours
      if (type.aliasTypeArguments?.some(ours)) return true;
      const declarations = [type.aliasSymbol, type.getSymbol()].flatMap((s) => s?.declarations ?? []);
      return declarations.some((d) => !d.getSourceFile().fileName.includes('/node_modules/'));
    };
    const mounts: string[] = [];
    const wide: { where: string; parameter: string; type: string; members: number }[] = [];
    const visit = (node: ts.Node, file: ts.SourceFile) => {
      if (ts.isFunctionLike(node) && node.parameters.length > 0) {
        const types = node.parameters.map((p) => checker.getTypeAtLocation(p));
        if (types.some(isRouter)) {
          const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
          const where = `${path.relative(ROOT, file.fileName)}:${line + 1}`;
          mounts.push(where);
          node.parameters.forEach((p, i) => {
            const type = types[i];
            if (isRouter(type) || type.getCallSignatures().length > 0) return;
            if (!ours(type)) return;
            const members = checker.getPropertiesOfType(checker.getApparentType(type)).filter(isPublic).length;
            if (members > MAX_DEPS_MEMBERS) {
              wide.push({ where, parameter: p.name.getText(file), type: checker.typeToString(type), members });
            }
          });
        }
      }
      ts.forEachChild(node, (child) => visit(child, file));
    };
    for (const file of program.getSourceFiles()) {
      if (files.includes(path.relative(ROOT, file.fileName))) visit(file, file);
    }
    // the check looks at something: every service mounts routes
    for (const service of ['identity', 'transactions', 'prices']) {
      expect(mounts.some((m) => m.startsWith(`services/${service}/src/`))).toBe(true);
    }
    expect(wide).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
  /** The folder column of each service's table: "### <service> (`services/<service>/src`)" up to the next heading. */
  const documented = (service: string): string[] => {
    const start = doc.indexOf(`### ${service} (`);
    expect(start).toBeGreaterThanOrEqual(0);
    const section = doc.slice(start, doc.indexOf('\n#', start + 1));
    return [...section.matchAll(/^\| `([a-z0-9-]+)\/` +\|/gm)].map((m) => m[1]).sort();
  };

  it.each(['identity', 'transactions', 'prices'])(
    'names every folder of services/%s/src, and only those',
    (service) => {
      const src = path.join(ROOT, 'services', service, 'src');
      const folders = fs
        .readdirSync(src, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
      expect(documented(service)).toEqual(folders);
      // each feature (not the kernel) says what it mounts and needs in an index.ts
      for (const folder of folders.filter((f) => f !== 'kernel')) {
        expect(fs.existsSync(path.join(src, folder, 'index.ts'))).toBe(true);
      }
    },
  );
});
