import http from 'node:http';
import express from 'express';
import { serve, type Readiness } from '../src';
import { testLogger } from './support';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('graceful shutdown', () => {
  it('lets in-flight requests finish, turns readiness off, then closes storage', async () => {
    const readiness: Readiness = { shuttingDown: false, checks: [] };
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const app = express();
    app.get('/slow', async (_req, res) => {
      await gate;
      res.send('done');
    });
    const handle = await serve({
      logger: testLogger,
      publicApp: app,
      adminApp: express(),
      port: 0,
      adminPort: 0,
      adminHost: '127.0.0.1',
      readiness,
      shutdownTimeoutMs: 5000,
      onClose: async () => void events.push('storage closed'),
    });
    const inflight = get(handle.publicPort, '/slow');
    await new Promise((r) => setTimeout(r, 50));
    const stopped = handle.stop().then(() => events.push('stopped'));
    await new Promise((r) => setTimeout(r, 50));
    expect(readiness.shuttingDown).toBe(true);
    expect(events).toEqual([]);
    await expect(get(handle.publicPort, '/slow')).rejects.toThrow();
    release();
    expect(await inflight).toEqual({ status: 200, body: 'done' });
    await stopped;
    expect(events).toEqual(['storage closed', 'stopped']);
  });
});
