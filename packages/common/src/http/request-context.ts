import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../logger';
import { traceIdOfActiveSpan } from '../tracing';
import { requestLineWriter } from './request-line';

const VALID_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Request id, from a sane X-Request-Id or generated. */
      id: string;
    }
  }
}

/** Honours a sane incoming X-Request-Id, otherwise makes one; echoes it on the response. */
export function requestId(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.headers['x-request-id'];
    req.id = typeof incoming === 'string' && VALID_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    next();
  };
}

/**
 * One log line per request; a request whose connection closed before the answer was sent is logged
 * as "client aborted request". Only the path is logged: query strings can carry codes and tokens.
 */
export function requestLog(logger: Logger): RequestHandler {
  const write = requestLineWriter(logger);
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    // read now, inside the request's span: undefined (and free) when tracing is off
    const traceId = traceIdOfActiveSpan();
    res.on('close', () => {
      const duration = Number(process.hrtime.bigint() - started) / 1e6;
      if (res.writableFinished) {
        write({ request_id: req.id, method: req.method, path: req.path, status: res.statusCode, duration_ms: duration, trace_id: traceId });
      } else {
        const trace = traceId ? { trace_id: traceId } : {};
        logger.info('client aborted request', { request_id: req.id, method: req.method, path: req.path, duration_ms: duration, ...trace });
      }
    });
    next();
  };
}
