import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { tracingOn } from '../tracing';

/** The methods the fast path answers (HEAD and the others always go to Express). */
export type FastMethod = 'GET' | 'POST';

/**
 * A GET (or POST) endpoint answered before Express's router: its path (exact, or a prefix and one trailing
 * `:parameter` segment) and the steps Express would run for it, in the same order.
 */
interface FastRoute {
  /** The route pattern, as `req.route.path` (the metrics' route label) and the OpenAPI path name it. */
  pattern: string;
  /** The trailing path parameter's name, for a pattern `<prefix>:<name>`. */
  param?: string;
  steps: RequestHandler[];
  /**
   * The endpoint's own error step (mounted on the router after its steps, e.g. /token's OAuth error
   * names): an error of one of `steps` goes through it before the app's error handler, as in Express.
   */
  onError?: ErrorRequestHandler;
  /** The app's first steps and then `steps`, made once (at the first request, after install). */
  all?: RequestHandler[];
}

type AppHandle = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

/**
 * Hot GET endpoints answered without walking Express's router (issue #28: for the hottest lookups the
 * router's matching of every layer against the path was most of the work left; for /introspect, a POST,
 * the router was 13 % of its profile). An app's `handle` is
 * wrapped: a GET or POST whose path is registered here (no percent-encoding in it) runs exactly the steps
 * Express would run for it — the app's own first steps (request id, the log line and metrics, HSTS),
 * then the endpoint's steps, then its 405 step — with Express's request and response objects, the
 * route pattern as `req.route` (so metrics label it alike), its parameter in `req.params`, Express 5's
 * handling of rejected promises, and for any error the endpoint's own error step (if it has one) and then
 * the app's error handler. Anything else (other
 * methods, HEAD, unknown paths, percent-encoded paths) goes to Express as before. While tracing runs,
 * every request goes to Express, whose instrumentation records the route's spans.
 */
export class FastPath {
  /** Per method: routes by exact path, and by the prefix before a trailing parameter. */
  private readonly exact: Record<FastMethod, Map<string, FastRoute>> = { GET: new Map(), POST: new Map() };
  private readonly prefixed: Record<FastMethod, Map<string, FastRoute>> = { GET: new Map(), POST: new Map() };
  private prefixLengths: number[] = [];
  private before: RequestHandler[] = [];
  private onError: ErrorRequestHandler | undefined;

  /**
   * Registers an endpoint's method: `path` as given to the router, `steps` that method's steps and its
   * 405 step. A POST's steps read its body themselves (the identity forms' parser is a step of each), as
   * no router-wide body parser runs on the public routers.
   */
  add(path: string, steps: RequestHandler[], method: FastMethod = 'GET', onError?: ErrorRequestHandler): void {
    const colon = path.indexOf(':');
    if (colon === -1) {
      if (path.includes('*') || path.includes('(')) throw new Error(`fast path: unsupported pattern ${path}`);
      this.exact[method].set(path, { pattern: path, steps, onError });
      return;
    }
    const prefix = path.slice(0, colon);
    const param = path.slice(colon + 1);
    if (!prefix.endsWith('/') || !/^\w+$/.test(param) || path.includes('*'))
      throw new Error(`fast path: only one trailing :parameter is supported (${path})`);
    this.prefixed[method].set(prefix, { pattern: path, param, steps, onError });
    this.prefixLengths = [...new Set([...this.prefixLengths, prefix.length])].sort((a, b) => b - a);
  }

  /**
   * Wraps `app.handle`: `before` are the app's steps ahead of its router (as mounted with app.use),
   * `onError` its error handler. Express's own request and response set-up is repeated (prototypes,
   * `req.res`, `res.req`, `res.locals`), so the steps get what they get from Express.
   */
  install(app: Express, before: RequestHandler[], onError: ErrorRequestHandler): void {
    this.before = before;
    this.onError = onError;
    const handle = (app as unknown as { handle: AppHandle }).handle;
    (app as unknown as { handle: AppHandle }).handle = (req, res, next) => {
      const method = req.method === 'GET' || req.method === 'POST' ? req.method : undefined;
      const found = method && !tracingOn() ? this.match(method, req.url ?? '') : undefined;
      if (!found) return handle.call(app, req, res, next);
      // what Express's app.handle does first: the app's prototypes (Node's own, see useNodeClasses,
      // so nothing changes here: a prototype set on every request would cost each one V8's fast
      // properties) and the app itself
      const request = app.request as object;
      const response = app.response as object;
      if (Object.getPrototypeOf(req) !== request) Object.setPrototypeOf(req, request);
      if (Object.getPrototypeOf(res) !== response) Object.setPrototypeOf(res, response);
      const ereq = req as unknown as Request;
      const eres = res as unknown as Response;
      ereq.app = app;
      eres.app = app;
      ereq.res = eres;
      eres.req = ereq;
      eres.locals ??= Object.create(null) as Response['locals'];
      ereq.baseUrl = '';
      ereq.originalUrl ??= req.url ?? '';
      // no percent sign in the path (see match), so the parameter needs no decoding
      ereq.params = found.value === undefined ? {} : { [found.route.param!]: found.value };
      ereq.route = { path: found.route.pattern } as Request['route'];
      this.run(found.route, ereq, eres);
    };
  }

  private match(method: FastMethod, url: string): { route: FastRoute; value?: string } | undefined {
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    // percent-encoded paths go through Express (its parameter checks name a malformed one)
    if (path.includes('%')) return undefined;
    const exact = this.exact[method].get(path);
    if (exact) return { route: exact };
    for (const length of this.prefixLengths) {
      if (path.length <= length) continue;
      const route = this.prefixed[method].get(path.slice(0, length));
      if (!route) continue;
      const value = path.slice(length);
      if (!value.includes('/')) return { route, value };
    }
    return undefined;
  }

  private run(route: FastRoute, req: Request, res: Response): void {
    const steps = (route.all ??= [...this.before, ...route.steps]);
    // bound rather than closures: under tsx (pnpm start) each closure made per request was also
    // named at run time (esbuild's keepNames), which the JWKS profile showed
    const run: FastRun = {
      route,
      steps,
      before: this.before.length,
      i: 0,
      failed: false,
      req,
      res,
      onError: this.onError!,
      next: undefined!,
    };
    run.next = advance.bind(undefined, run) as NextFunction;
    run.next();
  }
}

/** One request on the fast path: its steps, the next one to run, and whether it failed. */
interface FastRun {
  route: FastRoute;
  steps: RequestHandler[];
  /** How many of `steps` are the app's first steps, whose errors skip the endpoint's error step. */
  before: number;
  i: number;
  failed: boolean;
  req: Request;
  res: Response;
  onError: ErrorRequestHandler;
  next: NextFunction;
}

/** Express's final handler: nothing more to say on a response already begun. */
function finalHandler(run: FastRun, e?: unknown): void {
  if (e !== undefined && run.res.headersSent) run.req.socket.destroy();
}

function fail(run: FastRun, err: unknown): void {
  if (run.failed) return;
  run.failed = true;
  // the endpoint's error step sees the errors of the endpoint's steps (i counts the step that failed)
  const own = run.route.onError;
  if (own && run.i > run.before) {
    try {
      own(err, run.req, run.res, appError.bind(undefined, run, err));
    } catch (e) {
      appError(run, err, e);
    }
    return;
  }
  appError(run, undefined, err);
}

/**
 * The app's error handler, for `err`: what the endpoint's error step passed on (it passes every error on,
 * changed or not; one that passes on none leaves the original to answer).
 */
function appError(run: FastRun, original: unknown, err?: unknown): void {
  try {
    run.onError(err ?? original, run.req, run.res, finalHandler.bind(undefined, run));
  } catch (e) {
    finalHandler(run, e);
  }
}

/** The `next` of a fast-path request: runs its next step, or its error handler. */
function advance(run: FastRun, err?: unknown): void {
  if (err !== undefined && err !== 'route' && err !== 'router') return fail(run, err);
  // 'route' leaves the endpoint's steps: what Express reaches next is the endpoint's 405 step
  if (err !== undefined) run.i = Math.max(run.i, run.steps.length - 1);
  // the 405 step ends every endpoint's list, so a step that passes on past it does not exist
  const step = run.steps[run.i++];
  if (!step) return fail(run, new Error(`fast path: no step answered ${run.route.pattern}`));
  try {
    const ret = step(run.req, run.res, run.next) as unknown;
    if (ret instanceof Promise) ret.then(undefined, (e: unknown) => run.next(e ?? new Error('Rejected promise')));
  } catch (e) {
    run.next(e);
  }
}

const attached = new WeakMap<object, FastPath>();

/** Endpoints registered with `{ fast: true }` on this router are answered by `fast` (service-apps does this). */
export function attachFastPath(router: object, fast: FastPath): void {
  attached.set(router, fast);
}

export function fastPathOf(router: object): FastPath | undefined {
  return attached.get(router);
}
