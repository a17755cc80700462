import express, { Express, RequestHandler, Router } from 'express';
import type { Logger } from '../logger';
import { trustProxySetting } from '../config';
import { errorHandler, notFoundHandler } from './error-handler';
import { useNodeClasses } from './express-server';
import type { FastPath } from './fast-path';
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
  /** Hot GET endpoints answered before the router, with this app's first steps and its error handler. */
  fastPath?: FastPath;
}

/** Apps with a fast path, and the steps mounted ahead of their router: installed by finishHttpApp. */
const pendingFastPaths = new WeakMap<object, { fast: FastPath; before: RequestHandler[] }>();

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
  useNodeClasses(app);
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxySetting(options.trustProxy ?? 'false'));
  app.set('etag', false);
  const before = [requestContext(options.logger, options.metrics)];
  if (options.publicUrl?.startsWith('https:')) before.push(strictTransportSecurity);
  for (const step of before) app.use(step);
  if (options.fastPath) pendingFastPaths.set(app, { fast: options.fastPath, before });
  return app;
}

/** 404 for unknown routes and the one error handler, both in the shared JSON shape. */
export function finishHttpApp(app: Express | Router, logger: Logger): void {
  const onError = errorHandler(logger);
  app.use(notFoundHandler());
  app.use(onError);
  const pending = pendingFastPaths.get(app);
  if (pending) pending.fast.install(app as Express, pending.before, onError);
}

export const jsonBody = (limit: string): RequestHandler =>
  express.json({ limit, type: ['application/json', 'application/*+json'] });
export const formBody = (limit: string): RequestHandler =>
  express.urlencoded({ limit, extended: false, parameterLimit: FORM_FIELD_LIMIT });
