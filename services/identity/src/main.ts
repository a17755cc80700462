import './tracing';
import path from 'node:path';
import { runStandalone, type ServiceDefinition } from '@attest/common';
import { buildApp, buildContext, type ContextOptions } from './app';
import { loadIdentityConfig, type IdentityConfig } from './config';

export const identityService: ServiceDefinition<IdentityConfig> = {
  name: 'identity',
  migrationsDir: path.join(__dirname, '..', 'migrations'),
  loadConfig: loadIdentityConfig,
  listen: (config) => ({
    port: config.IDENTITY_PORT,
    adminPort: config.IDENTITY_ADMIN_PORT,
    portVariables: { port: 'IDENTITY_PORT', adminPort: 'IDENTITY_ADMIN_PORT' },
    publicUrl: config.BASE_URL,
  }),
  build: buildApp,
};

/** The identity service with options of its context: pnpm start's demo app owner (onOperatorCreatedUser). */
export const identityServiceWith = (options: ContextOptions): ServiceDefinition<IdentityConfig> => ({
  ...identityService,
  build: (deps) => buildApp(deps, buildContext(deps, options)),
});

if (require.main === module) void runStandalone(identityService);
