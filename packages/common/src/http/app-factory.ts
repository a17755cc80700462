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
  /** The service's public URL: when it is https, every answer carries Strict-Transport-Security. */
  publicUrl?: string;
}

/**
 * HSTS for a service served over https: a year (the value preload lists and scanners expect), and its
 * subdomains, so no http page under the host can be used to plant cookies or strip TLS. No `preload`:
 * that is a commitment for the whole registrable domain, which only its owner can make.
 */
export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains';

const strictTransportSecurity: RequestHandler = (_req, res, next) => {
  res.setHeader('Strict-Transport-Security', STRICT_TRANSPORT_SECURITY);
  next();
};

/** An express app with request ids, request logs (and metrics when given), no fingerprinting header. Mount routes, then call finish(). */
export function createHttpApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxySetting(options.trustProxy ?? 'false'));
  app.set('etag', false);
  app.use(requestContext(options.logger, options.metrics));
  if (options.publicUrl?.startsWith('https:')) app.use(strictTransportSecurity);
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
