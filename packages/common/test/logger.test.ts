import { Writable } from 'node:stream';
import express from 'express';
import request from 'supertest';
import winston from 'winston';
import { createLogger, requestContext } from '../src';

function captured(): { logger: winston.Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const logger = createLogger('test', 'info');
  logger.clear();
  logger.add(
    new winston.transports.Stream({
      stream: new Writable({ write: (chunk, _enc, done) => (chunks.push(String(chunk)), done()) }),
    }),
  );
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

describe('logger', () => {
  it('redacts secret-looking fields whatever a caller passes', () => {
    const { logger, lines } = captured();
    logger.info('oops', {
      password: 'hunter2',
      client_secret: 'sk_abc',
      access_token: 'eyJ',
      authorization: 'Bearer x',
      api_key: 'api_x',
      request_id: 'r-1',
      app_id: 'app_1',
    });
    const [line] = lines();
    expect(line).toMatchObject({
      password: '[redacted]',
      client_secret: '[redacted]',
      access_token: '[redacted]',
      authorization: '[redacted]',
      api_key: '[redacted]',
      request_id: 'r-1',
      app_id: 'app_1',
      service: 'test',
    });
    expect(JSON.stringify(line)).not.toMatch(/hunter2|sk_abc|eyJ|api_x/);
  });

  it('logs one JSON line per request with id, method, path, status and duration — never the query string', async () => {
    const { logger, lines } = captured();
    const app = express();
    app.use(requestContext(logger));
    app.get('/callback', (_req, res) => void res.status(204).end());
    await request(app).get('/callback?code=secret-code&access_token=secret-token').set('X-Request-Id', 'abc-1');
    await new Promise((resolve) => setImmediate(resolve)); // request lines are written once per turn of the event loop
    const [line] = lines();
    expect(line).toMatchObject({
      message: 'request',
      request_id: 'abc-1',
      method: 'GET',
      path: '/callback',
      status: 204,
    });
    expect(typeof line.duration_ms).toBe('number');
    expect(JSON.stringify(line)).not.toContain('secret');
  });

  it('writes the request lines of one turn of the event loop in one write, and all of them', async () => {
    const writes: string[] = [];
    const logger = createLogger('test', 'info');
    logger.clear();
    logger.add(
      new winston.transports.Stream({
        stream: new Writable({ write: (chunk, _enc, done) => (writes.push(String(chunk)), done()) }),
      }),
    );
    const app = express();
    app.use(requestContext(logger));
    // the 20 answers are sent together, once all 20 requests are in, as under load
    const waiting: (() => void)[] = [];
    app.get('/x', (_req, res) => {
      waiting.push(() => void res.status(204).end());
      if (waiting.length === 20) for (const answer of waiting) answer();
    });
    const server = app.listen(0);
    const port = (server.address() as { port: number }).port;
    try {
      // 20 requests on 20 connections in flight at once
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          fetch(`http://127.0.0.1:${port}/x`, { headers: { 'X-Request-Id': `r-${i}` } }),
        ),
      );
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      server.close();
    }
    const lines = writes
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { request_id: string });
    expect(lines.map((l) => l.request_id).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `r-${i}`).sort());
    expect(writes.length).toBeLessThan(20);
  });
});
