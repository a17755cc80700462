// The boundaries of the source tree (docs/architecture.md), checked by `pnpm lint` (dependency-cruiser).
// Each service's src/ is a composition root (main.ts, app.ts, config.ts, …), a kernel/ that several
// features use, and feature folders. A feature is entered through its index.ts only.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No file of src/ imports itself through others (type-only imports count too).',
      from: { path: '^(services|packages|apps)/[^/]+/src/' },
      to: { circular: true },
    },
    {
      name: 'feature-internals',
      severity: 'error',
      comment:
        "A feature uses another feature only through that feature's index.ts (the kernel's files are open to all).",
      from: { path: '^services/([^/]+)/src/([^/]+)/' },
      to: {
        path: '^services/$1/src/[^/]+/',
        pathNot: ['^services/$1/src/$2/', '^services/$1/src/kernel/', '^services/$1/src/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'root-uses-feature-index',
      severity: 'error',
      comment: 'The composition root (src/*.ts) wires features through their index.ts, never their internals.',
      from: { path: '^services/([^/]+)/src/[^/]+\\.ts$' },
      to: {
        path: '^services/$1/src/[^/]+/',
        pathNot: ['^services/$1/src/kernel/', '^services/$1/src/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'kernel-imports-no-feature',
      severity: 'error',
      comment: 'The kernel is used by features and uses none of them (only itself, config.ts and packages).',
      from: { path: '^services/([^/]+)/src/kernel/' },
      to: {
        path: '^services/$1/src/',
        pathNot: ['^services/$1/src/kernel/', '^services/$1/src/config\\.ts$'],
      },
    },
    {
      name: 'services-are-separate',
      severity: 'error',
      comment: "A service's source never imports another service's: they share code through packages/.",
      from: { path: '^services/([^/]+)/src/' },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'packages-import-no-service',
      severity: 'error',
      comment: 'packages/ are used by the services and the apps, never the other way round.',
      from: { path: '^packages/' },
      to: { path: '^(services|apps)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
