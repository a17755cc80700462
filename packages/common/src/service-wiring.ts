import path from 'node:path';
import type { Express } from 'express';
import { AuditLog } from './audit/audit-log';
import type { CommonConfig } from './config';
import { createServiceApps, type ServiceAppsOptions } from './http/service-apps';
import type { BuiltService, ServiceDefinition, ServiceDeps } from './service';

/** The names of C's members whose values are of type V. */
type KeysOf<C, V> = { [K in keyof C]-?: C[K] extends V ? K : never }[keyof C] & string;

/** What tells one service's definition from another's. */
export interface ServiceSpec<C extends CommonConfig> {
  name: string;
  /** The folder of the service's main.ts (src/, or dist/ when built): its migrations are in ../migrations. */
  dir: string;
  loadConfig(env: NodeJS.ProcessEnv): Readonly<C>;
  /** The configuration variables of the public port, the admin port and the public URL (e.g. PRICES_PORT). */
  port: KeysOf<C, number>;
  adminPort: KeysOf<C, number>;
  publicUrl: KeysOf<C, string>;
  build(deps: ServiceDeps<C>): Promise<BuiltService>;
}

/**
 * A service's definition as every service's main.ts writes it: its migrations beside its source folder,
 * it listens on the ports its configuration names (and says which variables they are when one is taken).
 */
export function defineService<C extends CommonConfig>(spec: ServiceSpec<C>): ServiceDefinition<C> {
  return {
    name: spec.name,
    migrationsDir: path.join(spec.dir, '..', 'migrations'),
    loadConfig: spec.loadConfig,
    listen: (config) => ({
      port: config[spec.port] as number,
      adminPort: config[spec.adminPort] as number,
      portVariables: { port: spec.port, adminPort: spec.adminPort },
      publicUrl: config[spec.publicUrl] as string,
    }),
    build: spec.build,
  };
}

/**
 * The service's audit trail on its own database, its events kept AUDIT_RETENTION_DAYS, written ahead to
 * its journal on `pnpm start`'s embedded database (not started).
 */
export const serviceAuditLog = (deps: ServiceDeps<CommonConfig>): AuditLog =>
  new AuditLog(deps.storage.db, deps.logger, {
    retentionDays: deps.config.AUDIT_RETENTION_DAYS,
    journalDir: deps.storage.auditJournalDir,
  });

/** What createServiceApps takes the same way in every service: from its deps and its CommonConfig. */
type FromDeps = 'logger' | 'readiness' | 'adminToken' | 'adminTokens' | 'audit' | 'trustProxy' | 'bodyLimit';

export type ServiceAppsFromDeps = Omit<ServiceAppsOptions, FromDeps> & {
  service: string;
  /** The service's audit trail: GET /admin/audit and the stored admin tokens, on its own database. */
  audit: AuditLog;
};

/**
 * createServiceApps as every service calls it: the logger, readiness and ADMIN_TOKEN from its deps,
 * ADMIN_TOKENS, TRUST_PROXY and BODY_LIMIT from its configuration, its audit trail on its own database;
 * the rest (public URL, documents, routes, metrics) as given.
 */
export function createServiceAppsFrom(
  deps: ServiceDeps<CommonConfig>,
  options: ServiceAppsFromDeps,
): { publicApp: Express; adminApp: Express } {
  const { audit, ...rest } = options;
  return createServiceApps({
    logger: deps.logger,
    readiness: deps.readiness,
    adminToken: deps.adminToken,
    adminTokens: deps.config.ADMIN_TOKENS,
    audit: { log: audit, db: deps.storage.db },
    trustProxy: deps.config.TRUST_PROXY,
    bodyLimit: deps.config.BODY_LIMIT,
    ...rest,
  });
}
