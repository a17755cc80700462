import { Writable } from 'node:stream';
import express from 'express';
import request from 'supertest';
import winston from 'winston';
import { createLogger, requestId, requestLog } from '../src';

function captured(): { logger: winston.Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const logger = createLogger('test', 'info');
  logger.clear();
  logger.add(new winston.transports.Stream({ stream: new Writable({ write: (chunk, _enc, done) => (chunks.push(String(chunk)), done()) }) }));
  return { logger, lines: () => chunks.join('').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

describe('logger', () => {
  it('redacts secret-looking fields whatever a caller passes', () => {
    const { logger, lines } = captured();
    logger.info('oops', { password: 'hunter2', client_secret: 'sk_abc', access_token: 'eyJ', authorization: 'Bearer x', api_key: 'api_x', request_id: 'r-1', app_id: 'app_1' });
    const [line] = lines();
    expect(line).toMatchObject({ password: '[redacted]', client_secret: '[redacted]', access_token: '[redacted]', authorization: '[redacted]', api_key: '[redacted]', request_id: 'r-1', app_id: 'app_1', service: 'test' });
    expect(JSON.stringify(line)).not.toMatch(/hunter2|sk_abc|eyJ|api_x/);
  });

  it('logs one JSON line per request with id, method, path, status and duration — never the query string', async () => {
    const { logger, lines } = captured();
    const app = express();
    app.use(requestId(), requestLog(logger));
    app.get('/callback', (_req, res) => void res.status(204).end());
    await request(app).get('/callback?code=secret-code&access_token=secret-token').set('X-Request-Id', 'abc-1');
    const [line] = lines();
    expect(line).toMatchObject({ message: 'request', request_id: 'abc-1', method: 'GET', path: '/callback', status: 204 });
    expect(typeof line.duration_ms).toBe('number');
    expect(JSON.stringify(line)).not.toContain('secret');
  });
});
