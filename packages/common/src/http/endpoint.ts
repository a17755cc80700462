import type { ErrorRequestHandler, RequestHandler, Router } from 'express';
import { match } from 'path-to-regexp';
import { errors } from '../errors';
import { apiRegistryOf, type ApiRegistry, type EndpointDocs, type Method } from './api-registry';
import { fastPathOf } from './fast-path';
import { malformedPathParameter } from './request-errors';
export type EndpointHandlers = Partial<Record<Method, RequestHandler[]>>;

const decodes = (value: string) => {
  try {
    decodeURIComponent(value);
    return true;
  } catch {
    return false;
  }
};

/**
 * The router decodes path parameters before any step runs and fails with a bare URIError; this step
 * runs first and names the parameter that is not valid percent-encoded UTF-8.
 */
function checkPathParameters(path: string | string[]): RequestHandler | null {
  const paths = ([] as string[]).concat(path).filter((p) => p.includes(':') || p.includes('*'));
  if (paths.length === 0) return null;
  const matches = match<Record<string, string | string[]>>(paths, { decode: false });
  return (req, _res, next) => {
    // only a percent sign can make decoding fail: most requests have none, and skip the match (once per
    // endpoint with parameters, on every request the router sees)
    if (!req.url.includes('%')) return next();
    const found = matches(req.path);
    if (!found) return next();
    const bad = Object.entries(found.params).find(([, value]) =>
      ([] as string[]).concat(value ?? []).some((v) => !decodes(v)),
    );
    next(bad ? malformedPathParameter(bad[0]) : undefined);
  };
}

export interface EndpointOptions {
  /**
   * A hot endpoint: its GET and POST answered before Express's router when the router has a fast path
   * attached (the service's public router; see FastPath), with the same steps.
   */
  fast?: boolean;
  /**
   * The endpoint's own error step, mounted on the router after its steps (so it sees their errors and
   * its 405's) and run alike on the fast path. It passes every error on (`next(err)`), changed or not.
   */
  onError?: ErrorRequestHandler;
}

/**
 * Registers one path with a list of named steps per method; any other method
 * gets 405 method_not_allowed with an Allow header. `docs` documents each method for the service's
 * OpenAPI document (or excludes the path from it, with a reason); a route without either fails the
 * "every route documented" test.
 */
export function endpoint(
  router: Router,
  path: string | string[],
  handlers: EndpointHandlers,
  docs?: EndpointDocs,
  options: EndpointOptions = {},
): void {
  const api = apiRegistryOf(router);
  if (api) {
    for (const one of ([] as string[]).concat(path))
      for (const method of Object.keys(handlers) as Method[]) {
        const full = api.prefix + one;
        if (docs && 'excluded' in docs) api.registry.add({ path: full, method, excluded: docs.excluded });
        else if (docs?.[method]) api.registry.add({ path: full, method, doc: docs[method] });
      }
  }
  const allow = Object.keys(handlers) as Method[];
  if (allow.includes('GET')) allow.splice(allow.indexOf('GET') + 1, 0, 'HEAD' as Method);
  const checkParameters = checkPathParameters(path);
  if (checkParameters) router.use(checkParameters);
  for (const [method, steps] of Object.entries(handlers) as [Method, RequestHandler[]][]) {
    router[method.toLowerCase() as 'get'](path, ...steps);
  }
  const notAllowed: RequestHandler = (req, _res, next) => next(errors.methodNotAllowed(req.method, allow));
  router.all(path, notAllowed);
  if (options.onError) router.use(path, options.onError);
  const fast = options.fast ? fastPathOf(router) : undefined;
  if (fast)
    for (const method of ['GET', 'POST'] as const)
      if (handlers[method])
        for (const one of ([] as string[]).concat(path))
          fast.add(one, [...handlers[method], notAllowed], method, options.onError);
}

/**
 * For routers whose routes are not endpoint()s (the admin API's adminRoute, /metrics): a request for a path
 * the registry holds under other methods gets 405 method_not_allowed with Allow, as endpoint() answers; any
 * other goes on (to 404). Mounted after the routes; `within` picks the registry's paths this router serves.
 */
export function methodNotAllowedFallback(
  registry: ApiRegistry,
  within: (path: string) => boolean = () => true,
): RequestHandler {
  let paths: { allow: string[]; matches: (path: string) => unknown }[] | undefined;
  const build = () => {
    const byPath = new Map<string, string[]>();
    for (const r of registry.routes) if (within(r.path)) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r.method]);
    return [...byPath].map(([path, methods]) => ({
      allow: methods.includes('GET') ? [...methods, 'HEAD'] : methods,
      matches: match(path, { decode: false }),
    }));
  };
  return (req, _res, next) => {
    paths ??= build();
    const path = req.baseUrl + req.path;
    const found = paths.find((p) => p.matches(path));
    next(found ? errors.methodNotAllowed(req.method, found.allow) : undefined);
  };
}
