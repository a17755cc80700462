import type { ErrorRequestHandler, NextFunction, Request, Response } from 'express';
import { errorBody, errors, isAppError, type AppError } from '../errors';
import type { Logger } from '../logger';
import { requestError } from './request-errors';
import { sendJson } from './send';

/** AppErrors as they are; failures to read the request as client errors; anything else a bare 500. */
export function toAppError(err: unknown, req?: Request): AppError {
  if (isAppError(err)) return err;
  return requestError(err, req) ?? errors.internal();
}

/** The client went away mid-request (body-parser's `request.aborted`): nobody to answer, nothing broken. */
export function isClientAbort(err: unknown, req: Request): boolean {
  const type = (err as { type?: string } | null)?.type;
  return type === 'request.aborted' || (req.destroyed && (err as { code?: string } | null)?.code === 'ECONNRESET');
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    // the request log says "client aborted request" when the connection closes unanswered
    if (isClientAbort(err, req)) return;
    const appError = toAppError(err, req);
    if (appError.status >= 500) {
      const cause = appError.code === 'internal_error' ? err : (appError.cause ?? err);
      logger.error(appError.code === 'internal_error' ? 'unhandled error' : appError.detail, {
        request_id: req.id,
        method: req.method,
        path: req.path,
        error: (cause as { message?: string })?.message ?? String(cause),
        stack: (cause as { stack?: string })?.stack,
      });
    }
    // as every other answer (send.ts): Node's own calls, the body written with the other answers of this turn;
    // an agent polls /token for an answer that is an error until the person acts (CIBA, the device flow)
    res.set(appError.headers);
    sendJson(res, errorBody(appError), appError.status);
  };
}

export function notFoundHandler() {
  return (req: Request, _res: Response, next: NextFunction) =>
    next(errors.notFound(`No endpoint at ${req.method} ${req.path}.`));
}
