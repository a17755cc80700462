import type { Router } from 'express';
import type { Cache } from '../cache';
import type { Db } from '../db';
import { endpoint } from './endpoint';
import { jsonResponse } from './openapi';

const HEALTH = {
  type: 'object',
  required: ['status'],
  properties: { status: { const: 'ok' } },
};
const READINESS = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { enum: ['ready', 'unavailable', 'shutting_down'] },
    checks: {
      type: 'object',
      description: 'Each check (database, cache, …) and its result',
      additionalProperties: { enum: ['ok', 'unavailable'] },
    },
  },
};

export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

export interface Readiness {
  shuttingDown: boolean;
  checks: ReadinessCheck[];
  /**
   * Whether the service can serve its public API, given which checks passed. Default: all of them.
   * A service that can serve through an outage of one dependency says so here (prices: from its cache).
   */
  rule?(ok: Record<string, boolean>): boolean;
}

/** The default checks: the service's Postgres and its cache answer. */
export function storageChecks(storage: { db: Pick<Db, 'ping'>; cache: Pick<Cache, 'ping'> }): ReadinessCheck[] {
  return [
    { name: 'database', check: () => storage.db.ping() },
    { name: 'cache', check: () => storage.cache.ping() },
  ];
}

async function runChecks(checks: ReadinessCheck[]): Promise<Record<string, string>> {
  const results: Record<string, string> = {};
  await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        await withTimeout(check(), 2000);
        results[name] = 'ok';
      } catch {
        results[name] = 'unavailable';
      }
    }),
  );
  return results;
}

function isReady(readiness: Readiness, results: Record<string, string>): boolean {
  if (readiness.shuttingDown) return false;
  const ok = Object.fromEntries(Object.entries(results).map(([name, result]) => [name, result === 'ok']));
  return readiness.rule ? readiness.rule(ok) : Object.values(ok).every(Boolean);
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** /healthz: the process is alive. /readyz: it can serve its public API (Readiness.rule) and is not shutting down. */
export function healthRoutes(router: Router, readiness: Readiness): void {
  endpoint(
    router,
    '/healthz',
    {
      GET: [(_req, res) => void res.set('Cache-Control', 'no-store').json({ status: 'ok' })],
    },
    {
      GET: {
        summary: 'Liveness: the process answers',
        tags: ['operations'],
        responses: { 200: jsonResponse('Alive', HEALTH) },
      },
    },
  );
  endpoint(
    router,
    '/readyz',
    {
      GET: [
        async (_req, res) => {
          const results = await runChecks(readiness.checks);
          const ready = isReady(readiness, results);
          res
            .status(ready ? 200 : 503)
            .set('Cache-Control', 'no-store')
            .json({
              status: readiness.shuttingDown ? 'shutting_down' : ready ? 'ready' : 'unavailable',
              checks: results,
            });
        },
      ],
    },
    {
      GET: {
        summary: 'Readiness: the service can serve its public API and is not shutting down',
        tags: ['operations'],
        responses: {
          200: jsonResponse('Ready', READINESS),
          503: jsonResponse('Not ready: a check the service needs failed, or it is shutting down', READINESS),
        },
      },
    },
  );
}
