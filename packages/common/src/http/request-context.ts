import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../logger';
import { routeLabel, type RequestMetrics } from './metrics';
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

/**
 * The first step of every request: a request id (a sane incoming X-Request-Id, otherwise a new one,
 * echoed on the response), then, when the response is done, one log line and the request metrics.
 * One step and one listener per request do all three (each of them alone used to add a step, a
 * listener, a closure and a timer reading). A request whose connection closed before the answer was
 * sent is logged as "client aborted request" and not counted. Only the path is logged: query strings
 * can carry codes and tokens.
 */
export function requestContext(logger: Logger, metrics?: RequestMetrics): RequestHandler {
  const write = requestLineWriter(logger);
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.headers['x-request-id'];
    req.id = typeof incoming === 'string' && VALID_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    const started = performance.now();
    // read now, inside the request's span: undefined (and free) when tracing is off
    const traceId = traceIdOfActiveSpan();
    // `on` and a flag rather than `once`: once's wrapper and removal cost more than the flag
    let logged = false;
    res.on('close', () => {
      if (logged) return;
      logged = true;
      const duration = performance.now() - started;
      if (res.writableFinished) {
        metrics?.record(req.method, routeLabel(req.route), res.statusCode, duration / 1000);
        write({
          request_id: req.id,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          // to the microsecond: a short number to print, and all a reader of the log needs
          duration_ms: Math.round(duration * 1000) / 1000,
          trace_id: traceId,
        });
      } else {
        const trace = traceId ? { trace_id: traceId } : {};
        logger.info('client aborted request', {
          request_id: req.id,
          method: req.method,
          path: req.path,
          duration_ms: duration,
          ...trace,
        });
      }
    });
    // A GET or HEAD carries no meaningful body (RFC 9110 §9.3.1). One sent anyway is read to its end and
    // dropped before the answer, as body-parser does with a body it refuses: answering first and closing
    // (Connection: close) with bytes unread would reset the connection, and the client lose the answer.
    if ((req.method === 'GET' || req.method === 'HEAD') && !req.complete && carriesBody(req)) {
      req.once('end', () => next());
      req.resume();
      return;
    }
    next();
  };
}

const carriesBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
