/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/test/**/*.test.ts'],
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
