import './tracing';
import { defineService, runStandalone, type ServiceDefinition } from '@attest/common';
import { buildApp, buildServices, type ServiceOptions } from './app';
import { loadIdentityConfig, type IdentityConfig } from './config';

export const identityService: ServiceDefinition<IdentityConfig> = defineService({
  name: 'identity',
  dir: __dirname,
  loadConfig: loadIdentityConfig,
  port: 'IDENTITY_PORT',
  adminPort: 'IDENTITY_ADMIN_PORT',
  publicUrl: 'BASE_URL',
  build: buildApp,
});

/** The identity service with options of its services: pnpm start's demo app owner (onOperatorCreatedUser). */
export const identityServiceWith = (options: ServiceOptions): ServiceDefinition<IdentityConfig> => ({
  ...identityService,
  build: (deps) => buildApp(deps, buildServices(deps, options)),
});

if (require.main === module) void runStandalone(identityService);
