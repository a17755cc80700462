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
      description:
        'Each check (database, cache, chain, …) and its result; degraded: it works but behind (the service says which checks it needs)',
      additionalProperties: { enum: ['ok', 'degraded', 'unavailable'] },
    },
    detail: {
      type: 'object',
      description: 'Numbers behind a check, by check name (transactions: chain, its lag in blocks)',
      additionalProperties: { type: 'object' },
    },
  },
};

export type CheckStatus = 'ok' | 'degraded' | 'unavailable';

/** What a check found, when more than "it answered": a status and numbers for /readyz's detail. */
export interface CheckReport {
  status: CheckStatus;
  detail?: Record<string, unknown>;
}

export interface ReadinessCheck {
  name: string;
  /** Resolves (ok, or a report) or throws (unavailable). */
  check(): Promise<void | CheckReport>;
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

async function runChecks(
  checks: ReadinessCheck[],
): Promise<{ results: Record<string, CheckStatus>; detail: Record<string, Record<string, unknown>> }> {
  const results: Record<string, CheckStatus> = {};
  const detail: Record<string, Record<string, unknown>> = {};
  await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        const report = await withTimeout(check(), 2000);
        results[name] = report?.status ?? 'ok';
        if (report?.detail) detail[name] = report.detail;
      } catch {
        results[name] = 'unavailable';
      }
    }),
  );
  return { results, detail };
}

function isReady(readiness: Readiness, results: Record<string, CheckStatus>): boolean {
  if (readiness.shuttingDown) return false;
  const ok = Object.fromEntries(Object.entries(results).map(([name, result]) => [name, result === 'ok']));
  return readiness.rule ? readiness.rule(ok) : Object.values(ok).every(Boolean);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
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
          const { results, detail } = await runChecks(readiness.checks);
          const ready = isReady(readiness, results);
          res
            .status(ready ? 200 : 503)
            .set('Cache-Control', 'no-store')
            .json({
              status: readiness.shuttingDown ? 'shutting_down' : ready ? 'ready' : 'unavailable',
              checks: results,
              ...(Object.keys(detail).length > 0 && { detail }),
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
