const fs = require('node:fs');
const path = require('node:path');

/**
 * With TEST_BACKEND_ONLY=true (CI's second run, against Postgres and Redis), only the test files that use
 * the test storage run: a file that neither it nor a test helper it imports (relative imports, followed
 * through test code, not through src/) names a storage helper or TEST_DATABASE_URL / TEST_REDIS_URL runs
 * the same on both backends, and ran in the embedded run already. The shared helpers' own definitions
 * (packages/common/test/support/index.ts, imported by nearly every file for its logger) do not count.
 */
const STORAGE =
  /\b(testStorage|testDatabase|testCache|testBus|TestStorage|replicaPair|freshDatabase|TEST_DATABASE_URL|TEST_REDIS_URL)\b/;
const SHARED_SUPPORT = path.join(__dirname, 'packages/common/test/support/index.ts');
const IMPORT = /(?:from|import|require)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function resolveTestImport(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const file of [`${base}.ts`, path.join(base, 'index.ts'), base])
    if (file.endsWith('.ts') && fs.existsSync(file) && fs.statSync(file).isFile()) return file;
  return null;
}

function usesTestStorage(testFile) {
  const seen = new Set();
  const queue = [testFile];
  while (queue.length) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    const source = fs.readFileSync(file, 'utf8');
    if (file !== SHARED_SUPPORT && STORAGE.test(source)) return true;
    for (const [, spec] of source.matchAll(IMPORT)) {
      const next = resolveTestImport(file, spec);
      if (next && !next.split(path.sep).includes('src')) queue.push(next);
    }
  }
  return false;
}

function testFiles(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) testFiles(full, out);
    else if (entry.name.endsWith('.test.ts') && full.split(path.sep).includes('test')) out.push(full);
  }
  return out;
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const backendFree = () =>
  ['packages', 'services', 'test']
    .flatMap((root) => testFiles(path.join(__dirname, root)))
    .filter((file) => !usesTestStorage(file))
    .map((file) => `^${escape(file)}$`);

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...(process.env.TEST_BACKEND_ONLY === 'true' ? backendFree() : [])],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
        module: { type: 'commonjs', ignoreDynamic: true },
      },
    ],
  },
  moduleNameMapper: {
    '^@attest/common$': '<rootDir>/packages/common/src/index.ts',
    '^@attest/common/tracing$': '<rootDir>/packages/common/src/tracing.ts',
    '^@attest/testing$': '<rootDir>/packages/common/test/support/index.ts',
  },
  // every supertest response of an app with an OpenAPI document is validated against it
  setupFilesAfterEnv: ['<rootDir>/packages/common/test/support/openapi-responses.ts'],
  testTimeout: 60000,
  maxWorkers: 2,
};
