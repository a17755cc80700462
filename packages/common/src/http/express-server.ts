import http from 'node:http';
import express, { type Express, type Request, type Response } from 'express';

type AppHandle = (req: http.IncomingMessage, res: http.ServerResponse, next?: (err?: unknown) => void) => void;

let installed = false;
/** The names a copy of this module put on a Node prototype (a process may load two copies: tests, bundles). */
const INSTALLED = Symbol.for('attest.expressMethods');
/** A request's parsed query string, and the URL it was parsed from. */
const QUERY = Symbol.for('attest.query');

type QueryHeld = { [QUERY]?: { url: string | undefined; value: unknown } };

/**
 * Express 5's `req.query` getter parses the query string again at every read, and returns a new object
 * each time. Routes read it once per parameter, and middleware reads it again. This getter parses once
 * per request and keeps the result with the URL it came from. If the URL changes (a router mounted at a
 * path strips its prefix from req.url), the query string is parsed again.
 */
function memoizedQuery(parse: (this: http.IncomingMessage) => unknown): PropertyDescriptor {
  return {
    configurable: true,
    enumerable: true,
    get(this: http.IncomingMessage & QueryHeld) {
      const held = this[QUERY];
      if (held !== undefined && held.url === this.url) return held.value;
      const value = parse.call(this);
      this[QUERY] = { url: this.url, value };
      return value;
    },
  };
}

/**
 * Puts Express's request and response methods (`req.get`, `req.query`, `res.json`, `res.send`, …) on
 * Node's own `IncomingMessage` and `ServerResponse` prototypes, once per process. A name Node already
 * defines is never replaced (that would change Node's own objects): it is an error. `req.query` is
 * Express's own, parsed once per request (memoizedQuery).
 */
function installExpressMethods(): void {
  if (installed) return;
  for (const [from, to] of [
    [express.request, http.IncomingMessage.prototype],
    [express.response, http.ServerResponse.prototype],
  ] as const) {
    const target = to as { [INSTALLED]?: Set<string> };
    const ours = (target[INSTALLED] ??= new Set());
    const own = Object.getOwnPropertyDescriptors(from) as PropertyDescriptorMap;
    for (const name of Object.keys(own)) {
      if (name in to && !ours.has(name))
        throw new Error(`Express's ${name} would replace Node's own on ${to.constructor.name}`);
      ours.add(name);
    }
    if (to === http.IncomingMessage.prototype && own.query?.get !== undefined)
      own.query = memoizedQuery(own.query.get as (this: http.IncomingMessage) => unknown);
    Object.defineProperties(to, own);
  }
  installed = true;
}

/**
 * Makes `app` handle Node's own request and response objects as they are: no prototype of its own.
 *
 * Express gives every request and response its app's prototype (`app.request`, `app.response`, whose
 * only own property is `app`) with `Object.setPrototypeOf` when it handles them. An object whose
 * prototype changes after it was made loses V8's fast property access, and so does every function that
 * later touches it, Node's own HTTP code included (an Express 5 hello world pinned to one core: 7,900
 * req/s with it, 26,000 without). Making the objects with the app's prototype from the start (subclasses
 * of Node's classes, as `http.createServer({ IncomingMessage, ServerResponse })` allows) avoided that,
 * but a plain Node server with a subclass, even an empty `class extends http.IncomingMessage {}`, still
 * served a third fewer requests than with Node's own classes: Node's HTTP code is tuned for the objects
 * of its own classes, and every listener of a process (the three services and their admin ports in
 * `pnpm start`) had classes of its own.
 *
 * So Express's methods go on Node's prototypes (`installExpressMethods`), each app's `request` and
 * `response` are those prototypes (Express's `setPrototypeOf` finds nothing to change), and `req.app`
 * and `res.app`, which Express reads from the app's prototype, are set on each request as it arrives,
 * before Express handles it. Apps are never mounted inside other apps here (Express would then swap
 * prototypes per app, and `req.app` would stay the outer app).
 */
export function useNodeClasses(app: Express): void {
  installExpressMethods();
  app.request = http.IncomingMessage.prototype as Express['request'];
  app.response = http.ServerResponse.prototype as unknown as Express['response'];
  const target = app as unknown as { handle: AppHandle };
  const handle = target.handle;
  target.handle = (req, res, next) => {
    (req as Request).app = app;
    (res as unknown as Response).app = app;
    handle.call(app, req, res, next);
  };
}

/** An HTTP server for an Express app: Node's own request and response classes (see useNodeClasses). */
export function createExpressServer(app: Express): http.Server {
  return http.createServer(app);
}
