import { createServiceApps, type BuiltService, type ServiceDeps } from '@attest/common';
import type { IdentityConfig } from './config';

/** Composition root: stores → domain → routes, for both the public and the admin listener. */
export async function buildApp(deps: ServiceDeps<IdentityConfig>): Promise<BuiltService> {
  const { config, logger, readiness, adminToken } = deps;
  return createServiceApps({
    logger,
    readiness,
    adminToken,
    trustProxy: config.TRUST_PROXY,
    bodyLimit: config.BODY_LIMIT,
    publicRoutes: () => undefined,
    adminRoutes: () => undefined,
  });
}
