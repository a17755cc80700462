import { Router, type Express, type RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import { adminTokenStore } from '../audit/admin-tokens';
import type { AuditLog } from '../audit/audit-log';
import { auditAdminRoutes } from '../audit/audit-routes';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { environmentTokens, requireAdminToken } from './admin-auth';
import { ADMIN_TOKEN_SCHEME } from './admin-docs';
import { createHttpApp, finishHttpApp, jsonBody } from './app-factory';
import { ApiRegistry, attachApiRegistry, type ApiInfo } from './api-registry';
import { healthRoutes, type Readiness } from './health';
import { attachFastPath, FastPath } from './fast-path';
import { createHttpMetrics, metricsRoute } from './metrics';
import { methodNotAllowedFallback } from './endpoint';
import { openApiRoutes } from './openapi';

export interface ServiceAppsOptions {
  /** Names the service in metrics. */
  service?: string;
  logger: Logger;
  readiness: Readiness;
  /** ADMIN_TOKEN, the operator "admin" (unset when only ADMIN_TOKENS are configured). */
  adminToken?: string;
  /** ADMIN_TOKENS: `name:token` pairs, each an operator the audit trail names. */
  adminTokens?: string;
  /** The service's audit trail and database: mounts GET /admin/audit and the stored admin tokens. */
  audit?: { log: AuditLog; db: Db };
  trustProxy: string;
  bodyLimit: string;
  /** The public URL (BASE_URL, API_URL, PRICES_URL): https adds HSTS to every public answer. */
  publicUrl?: string;
  /** The public API's OpenAPI document (built from the routes' docs), served at /openapi.json and /docs. */
  publicApi?: ApiInfo;
  /**
   * The admin API's document, on the admin port (no token needed to read it: it holds no secrets); the
   * `adminToken` security scheme is added to its components.
   */
  adminApi?: ApiInfo;
  /** Mounts the public routes (SPEC endpoints, pages). */
  publicRoutes(router: Router): void;
  /** Mounts the admin API routes; they run after the admin token check and a JSON body parser. */
  adminRoutes(router: Router): void;
  /** Adds the service's own metrics (workers' counters) to the registry /metrics serves. */
  metrics?(registry: Registry): void;
}

/**
 * A request that carries no JSON body (none at all, or another content type) reads as `{}`, so the
 * route's validation answers 400 naming the first required field instead of failing on `undefined`.
 */
const emptyBodyAsObject: RequestHandler = (req, _res, next) => {
  req.body ??= {};
  next();
};

/** The public app (health + SPEC routes) and the admin app (token-checked API, health, /metrics). */
export function createServiceApps(options: ServiceAppsOptions): { publicApp: Express; adminApp: Express } {
  const metrics = createHttpMetrics(options.service ?? 'attest');
  options.metrics?.(metrics.registry);
  // the public endpoints registered with { fast: true } are answered before the router
  const fastPath = new FastPath();
  const publicApp = createHttpApp({
    logger: options.logger,
    trustProxy: options.trustProxy,
    metrics: metrics.requests,
    publicUrl: options.publicUrl,
    fastPath,
  });
  const publicRouter = Router();
  attachFastPath(publicRouter, fastPath);
  const publicRegistry = new ApiRegistry();
  attachApiRegistry(publicRouter, publicRegistry);
  healthRoutes(publicRouter, options.readiness);
  options.publicRoutes(publicRouter);
  const fallback = (api: string): ApiInfo => ({
    title: `${options.service ?? 'Attest'} ${api}`,
    version: '1',
    serverUrl: '/',
  });
  openApiRoutes(publicApp, publicRouter, publicRegistry, options.publicApi ?? fallback('public API'));
  publicApp.use(publicRouter);
  finishHttpApp(publicApp, options.logger);

  const adminApp = createHttpApp({ logger: options.logger });
  const adminHealth = Router();
  const adminRegistry = new ApiRegistry();
  attachApiRegistry(adminHealth, adminRegistry);
  healthRoutes(adminHealth, options.readiness);
  // metrics stay on the admin port, which only operators and scrapers reach
  metricsRoute(adminHealth, metrics.registry);
  const isAdminApi = (path: string) => path === '/admin' || path.startsWith('/admin/');
  adminApp.use(adminHealth);
  const adminRouter = Router();
  attachApiRegistry(adminRouter, adminRegistry, '/admin');
  const stored = options.audit && adminTokenStore(options.audit.db);
  adminRouter.use(
    requireAdminToken({ adminToken: options.adminToken, adminTokens: options.adminTokens, stored }),
    jsonBody(options.bodyLimit),
    emptyBodyAsObject,
  );
  options.adminRoutes(adminRouter);
  if (options.audit) {
    const environmentOperators = environmentTokens(options).map((t) => t.name);
    auditAdminRoutes(adminRouter, { audit: options.audit.log, db: options.audit.db, environmentOperators });
  }
  // a method an admin path does not take: 405 with Allow (after the token check), as endpoint() answers
  adminRouter.use(methodNotAllowedFallback(adminRegistry, isAdminApi));
  const adminApi = options.adminApi ?? fallback('admin API');
  openApiRoutes(adminApp, adminHealth, adminRegistry, {
    ...adminApi,
    components: {
      ...adminApi.components,
      securitySchemes: { adminToken: ADMIN_TOKEN_SCHEME, ...adminApi.components?.securitySchemes },
    },
  });
  // after every route of adminHealth, openApiRoutes' included
  adminHealth.use(methodNotAllowedFallback(adminRegistry, (path) => !isAdminApi(path)));
  adminApp.use('/admin', adminRouter);
  finishHttpApp(adminApp, options.logger);
  return { publicApp, adminApp };
}
