import type { Router } from 'express';
import { endpoint } from './endpoint';

export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

export interface Readiness {
  shuttingDown: boolean;
  checks: ReadinessCheck[];
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

/** /healthz: the process is alive. /readyz: its storage answers and it is not shutting down. */
export function healthRoutes(router: Router, readiness: Readiness): void {
  endpoint(router, '/healthz', {
    GET: [(_req, res) => void res.set('Cache-Control', 'no-store').json({ status: 'ok' })],
  });
  endpoint(router, '/readyz', {
    GET: [
      async (_req, res) => {
        const results: Record<string, string> = {};
        await Promise.all(
          readiness.checks.map(async ({ name, check }) => {
            try {
              await withTimeout(check(), 2000);
              results[name] = 'ok';
            } catch {
              results[name] = 'unavailable';
            }
          }),
        );
        const ready = !readiness.shuttingDown && Object.values(results).every((v) => v === 'ok');
        res
          .status(ready ? 200 : 503)
          .set('Cache-Control', 'no-store')
          .json({ status: readiness.shuttingDown ? 'shutting_down' : ready ? 'ready' : 'unavailable', checks: results });
      },
    ],
  });
}
