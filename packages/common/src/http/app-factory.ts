import express, { Express, RequestHandler, Router } from 'express';
import type { Logger } from '../logger';
import { trustProxySetting } from '../config';
import { errorHandler, notFoundHandler } from './error-handler';
import type { RequestMetrics } from './metrics';
import { requestContext } from './request-context';
import { FORM_FIELD_LIMIT } from './request-errors';

export interface AppOptions {
  logger: Logger;
  trustProxy?: string;
  /** Counts and times every request by route pattern. */
  metrics?: RequestMetrics;
}

/** An express app with request ids, request logs (and metrics when given), no fingerprinting header. Mount routes, then call finish(). */
export function createHttpApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxySetting(options.trustProxy ?? 'false'));
  app.set('etag', false);
  app.use(requestContext(options.logger, options.metrics));
  return app;
}

/** 404 for unknown routes and the one error handler, both in the shared JSON shape. */
export function finishHttpApp(app: Express | Router, logger: Logger): void {
  app.use(notFoundHandler());
  app.use(errorHandler(logger));
}

export const jsonBody = (limit: string): RequestHandler =>
  express.json({ limit, type: ['application/json', 'application/*+json'] });
export const formBody = (limit: string): RequestHandler =>
  express.urlencoded({ limit, extended: false, parameterLimit: FORM_FIELD_LIMIT });
