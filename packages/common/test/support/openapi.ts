import type { Express } from 'express';
import request from 'supertest';
import { servedApiOf } from '../../src/http/openapi';

/** Every path and method the document lists answers with something other than 404 or 405. */
export async function expectDocumentMatchesRoutes(app: Express, expectedPaths: string[]): Promise<void> {
  const res = await request(app).get('/openapi.json');
  expect(res.status).toBe(200);
  expect(res.body.openapi).toBe('3.1.0');
  const paths = res.body.paths as Record<string, Record<string, unknown>>;
  expect(Object.keys(paths).sort()).toEqual([...expectedPaths].sort());
  for (const [path, operations] of Object.entries(paths)) {
    const concrete = path.replace(/\{[^}]+\}/g, `0x${'0'.repeat(64)}`);
    for (const method of Object.keys(operations) as ('get' | 'post' | 'options')[]) {
      const answer = await request(app)[method](concrete);
      const unrouted =
        answer.status === 405 || (answer.status === 404 && answer.body?.detail?.startsWith('No endpoint at'));
      expect({ path, method, unrouted }).toEqual({ path, method, unrouted: false });
    }
  }
}

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: string | string[];
}

/** Every route an express app has, as "METHOD /path" (nested routers under their mount paths). */
export function routesOf(app: Express): { method: string; path: string }[] {
  const found: { method: string; path: string }[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const path of ([] as string[]).concat(layer.route.path))
          for (const method of Object.keys(layer.route.methods).filter((m) => m !== '_all'))
            found.push({ method: method.toUpperCase(), path: prefix + path });
      } else if (layer.handle?.stack && typeof layer.rawPath === 'string') {
        walk(layer.handle.stack, prefix + (layer.rawPath === '/' ? '' : layer.rawPath));
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return found;
}

/**
 * The routes of `app` that are neither in its OpenAPI document nor explicitly excluded from it, as
 * "METHOD /path" for the failure message; empty when every route is accounted for.
 */
export function undocumentedRoutes(app: Express): string[] {
  const api = servedApiOf(app);
  if (!api) return ['(this app serves no OpenAPI document)'];
  return routesOf(app)
    .filter(({ method, path }) => !api.registry.accounted(path, method))
    .map(({ method, path }) => `${method} ${path}`);
}

/**
 * The OpenAPI document `app` serves (with a 200, no token needed), once checked: its paths are
 * `expectedPaths`, each answers (expectDocumentMatchesRoutes), and every route of the app is in it.
 */
export async function checkedDocument(app: Express, expectedPaths: string[]): Promise<request.Response['body']> {
  await expectDocumentMatchesRoutes(app, expectedPaths);
  expect(undocumentedRoutes(app)).toEqual([]);
  return (await request(app).get('/openapi.json').expect(200)).body;
}

/** The paths every service's public document has from the common package: health, readiness, the document, its page. */
export const COMMON_PUBLIC_PATHS = ['/healthz', '/readyz', '/openapi.json', '/docs'];

/** The paths every service's admin document has from the common package: audit log, admin tokens, health, metrics, document. */
export const COMMON_ADMIN_PATHS = [
  '/admin/audit',
  '/admin/admin-tokens',
  '/admin/admin-tokens/{name}',
  '/healthz',
  '/readyz',
  '/metrics',
  '/openapi.json',
  '/docs',
];
