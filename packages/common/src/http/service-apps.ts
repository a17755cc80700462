import { Router, type Express } from 'express';
import type { Logger } from '../logger';
import { requireAdminToken } from './admin-auth';
import { createHttpApp, finishHttpApp, jsonBody } from './app-factory';
import { healthRoutes, type Readiness } from './health';

export interface ServiceAppsOptions {
  logger: Logger;
  readiness: Readiness;
  adminToken: string;
  trustProxy: string;
  bodyLimit: string;
  /** Mounts the public routes (SPEC endpoints, pages). */
  publicRoutes(router: Router): void;
  /** Mounts the admin API routes; they run after the admin token check and a JSON body parser. */
  adminRoutes(router: Router): void;
}

/** The public app (health + SPEC routes) and the admin app (token-checked API, also health). */
export function createServiceApps(options: ServiceAppsOptions): { publicApp: Express; adminApp: Express } {
  const publicApp = createHttpApp({ logger: options.logger, trustProxy: options.trustProxy });
  const publicRouter = Router();
  healthRoutes(publicRouter, options.readiness);
  options.publicRoutes(publicRouter);
  publicApp.use(publicRouter);
  finishHttpApp(publicApp, options.logger);

  const adminApp = createHttpApp({ logger: options.logger });
  const adminHealth = Router();
  healthRoutes(adminHealth, options.readiness);
  adminApp.use(adminHealth);
  const adminRouter = Router();
  adminRouter.use(requireAdminToken(options.adminToken), jsonBody(options.bodyLimit));
  options.adminRoutes(adminRouter);
  adminApp.use('/admin', adminRouter);
  finishHttpApp(adminApp, options.logger);
  return { publicApp, adminApp };
}

