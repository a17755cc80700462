import type { ErrorRequestHandler, Request, Response, Router } from 'express';
import { documentPageErrors, errorBody, toAppError, type AppError } from '@attest/common';
import { errorPage } from './pages';

/** An error of a browser page (/authorize, /signin, /consent): the HTML error page, or JSON when asked for. */
export function showPageError(req: Request, res: Response, err: AppError): void {
  res.set(err.headers).set('Cache-Control', 'no-store');
  if (req.accepts(['html', 'json']) === 'json') return void res.status(err.status).json(errorBody(err));
  errorPage(res, err.status, errorBody(err));
}

/**
 * Client errors raised by a page's steps (a body that cannot be read, a wrong method or content type)
 * keep the page's error page; server errors go on to the service's error handler, which logs them.
 */
export const pageErrors: ErrorRequestHandler = (err: unknown, req, res, next) => {
  if (res.headersSent) return next(err);
  const appError = toAppError(err, req);
  if (appError.status >= 500) return next(err);
  showPageError(req, res, appError);
};

/** Mounts pageErrors for the paths under `prefix`, and says so to the OpenAPI document (their 405 is a page too). */
export function usePageErrors(router: Router, prefix: string): void {
  router.use(prefix, pageErrors);
  documentPageErrors(router, prefix);
}
