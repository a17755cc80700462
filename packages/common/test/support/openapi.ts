import type { Express } from 'express';
import request from 'supertest';

/** Every path and method the document lists answers with something other than 404 or 405. */
export async function expectDocumentMatchesRoutes(app: Express, expectedPaths: string[]): Promise<void> {
  const res = await request(app).get('/openapi.json');
  expect(res.status).toBe(200);
  expect(res.body.openapi).toBe('3.1.0');
  const paths = res.body.paths as Record<string, Record<string, unknown>>;
  expect(Object.keys(paths).sort()).toEqual([...expectedPaths].sort());
  for (const [path, operations] of Object.entries(paths)) {
    const concrete = path.replace(/\{[^}]+\}/g, `0x${'0'.repeat(64)}`);
    for (const method of Object.keys(operations) as ('get' | 'post')[]) {
      const answer = await request(app)[method](concrete);
      const unrouted =
        answer.status === 405 || (answer.status === 404 && answer.body?.detail?.startsWith('No endpoint at'));
      expect({ path, method, unrouted }).toEqual({ path, method, unrouted: false });
    }
  }
}
