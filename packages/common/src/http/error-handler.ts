import type { ErrorRequestHandler, NextFunction, Request, Response } from 'express';
import { AppError, errorBody, errors, isAppError } from '../errors';
import type { Logger } from '../logger';

interface HttpLikeError {
  type?: string;
  status?: number;
}

/** Maps body-parser failures and everything else to AppError; unknown errors become a bare 500. */
export function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const http = err as HttpLikeError;
  if (http?.type === 'entity.too.large') return errors.payloadTooLarge();
  if (http?.type === 'entity.parse.failed') return errors.invalidBody('The request body could not be parsed.');
  if (http?.type === 'charset.unsupported' || http?.type === 'encoding.unsupported')
    return errors.invalidBody('The request body uses an unsupported encoding.');
  return errors.internal();
}

/** The client went away mid-request (body-parser's `request.aborted`): nobody to answer, nothing broken. */
export function isClientAbort(err: unknown, req: Request): boolean {
  const type = (err as HttpLikeError | null)?.type;
  return type === 'request.aborted' || (req.destroyed && (err as { code?: string } | null)?.code === 'ECONNRESET');
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    // the request log says "client aborted request" when the connection closes unanswered
    if (isClientAbort(err, req)) return;
    const appError = toAppError(err);
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
    res.status(appError.status).set(appError.headers).json(errorBody(appError));
  };
}

export function notFoundHandler() {
  return (req: Request, _res: Response, next: NextFunction) =>
    next(errors.notFound(`No endpoint at ${req.method} ${req.path}.`));
}
