import type { RequestHandler, Router } from 'express';
import { errors } from '../errors';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
export type EndpointHandlers = Partial<Record<Method, RequestHandler[]>>;

/**
 * Registers one path with a list of named steps per method; any other method
 * gets 405 method_not_allowed with an Allow header.
 */
export function endpoint(router: Router, path: string | string[], handlers: EndpointHandlers): void {
  const allow = Object.keys(handlers) as Method[];
  if (allow.includes('GET')) allow.splice(allow.indexOf('GET') + 1, 0, 'HEAD' as Method);
  for (const [method, steps] of Object.entries(handlers) as [Method, RequestHandler[]][]) {
    router[method.toLowerCase() as 'get'](path, ...steps);
  }
  router.all(path, (req, _res, next) => next(errors.methodNotAllowed(req.method, allow)));
}
