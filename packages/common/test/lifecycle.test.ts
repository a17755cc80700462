import { spawnSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import express, { Router } from 'express';
import winston from 'winston';
import { createHttpApp, createLogger, finishHttpApp, healthRoutes, jsonBody, serve, type Readiness } from '../src';
import { serveOnFreePorts, testLogger } from './support';

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

/** A GET on a keep-alive connection; `connection` is what the server answers about reusing it. */
type KeepAliveAnswer = { status: number; body: string; connection?: string };

function getKeepAlive(port: number, path: string, agent: http.Agent): Promise<KeepAliveAnswer> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
      })
      .on('error', reject);
  });
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('test', 'info');
  logger.clear();
  const stream = new Writable({ write: (c, _e, done) => (lines.push(JSON.parse(String(c))), done()) });
  logger.add(new winston.transports.Stream({ stream }));
  return { logger, lines };
}

const tick = () => new Promise((r) => setImmediate(r));

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

describe('draining on shutdown', () => {
  it('answers /readyz 503 at once, serves new connections for the delay, then refuses them', async () => {
    const readiness: Readiness = { shuttingDown: false, checks: [] };
    const events: string[] = [];
    const slow = gate();
    const delay = gate();
    const delays: number[] = [];
    const router = Router();
    healthRoutes(router, readiness);
    router.get('/slow', async (_req, res) => {
      await slow.wait;
      res.send('done');
    });
    router.get('/fast', (_req, res) => void res.send('fast'));
    const app = express().use(router);
    const handle = await serve({
      logger: testLogger,
      publicApp: app,
      adminApp: express(),
      port: 0,
      adminPort: 0,
      adminHost: '127.0.0.1',
      readiness,
      // long enough that the test fails on it if a finished keep-alive connection kept the server open
      shutdownTimeoutMs: 120000,
      shutdownDelayMs: 5000,
      delay: (ms) => (delays.push(ms), delay.wait),
      onClose: async () => void events.push('storage closed'),
    });
    const agent = new http.Agent({ keepAlive: true });
    const inflight = getKeepAlive(handle.publicPort, '/slow', agent);
    await tick();
    expect(await getKeepAlive(handle.publicPort, '/fast', agent)).toEqual({
      status: 200,
      body: 'fast',
      connection: 'keep-alive',
    });
    const stopped = handle.stop().then(() => events.push('stopped'));

    const ready = await get(handle.publicPort, '/readyz');
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual({ status: 'shutting_down', checks: {} });
    // new connections are still served; responses ask keep-alive clients to reconnect (elsewhere)
    expect(await getKeepAlive(handle.publicPort, '/fast', agent)).toEqual({
      status: 200,
      body: 'fast',
      connection: 'close',
    });
    expect(await get(handle.publicPort, '/fast')).toEqual({ status: 200, body: 'fast' });
    expect(delays).toEqual([5000]);
    expect(events).toEqual([]);

    delay.open();
    await tick();
    await expect(get(handle.publicPort, '/fast')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(events).toEqual([]);
    slow.open();
    // begun before the shutdown: answered keep-alive, and its connection is closed once idle
    expect(await inflight).toEqual({ status: 200, body: 'done', connection: 'keep-alive' });
    await stopped;
    expect(events).toEqual(['storage closed', 'stopped']);
    agent.destroy();
  });

  it('logs a client that aborts its request as such, with the request id, not as an unhandled error', async () => {
    const { logger, lines } = capturedLogger();
    const app = createHttpApp({ logger });
    app.post('/echo', jsonBody('100kb'), (req, res) => void res.json(req.body));
    finishHttpApp(app, logger);
    const server = http.createServer(app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as net.AddressInfo;
    const received = new Promise((r) => server.once('request', r));
    const socket = net.connect(port, '127.0.0.1');
    const head = ['POST /echo HTTP/1.1', 'Host: x', 'X-Request-Id: abort-1', 'Content-Type: application/json'];
    socket.write(`${head.join('\r\n')}\r\nContent-Length: 1000\r\n\r\n{"a":`);
    await received;
    socket.destroy();
    while (!lines.some((l) => l.request_id === 'abort-1')) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => server.close(r));
    await new Promise((r) => setTimeout(r, 20));
    expect(lines.filter((l) => l.request_id === 'abort-1')).toEqual([
      expect.objectContaining({
        level: 'info',
        message: 'client aborted request',
        request_id: 'abort-1',
        method: 'POST',
        path: '/echo',
      }),
    ]);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  });
});

describe('the listeners', () => {
  it('hand Express Node’s own request and response objects, unchanged; req.app and res.app are the app', async () => {
    const seen: { request: boolean; response: boolean; admin: boolean }[] = [];
    type Handle = (req: http.IncomingMessage, res: http.ServerResponse, next?: unknown) => void;
    const withProbe = (app: express.Express, admin: boolean) => {
      // express's own entry point (untyped): what the server made, before Express handles it
      const internal = app as unknown as { handle: Handle };
      const handle = internal.handle.bind(app);
      internal.handle = (req, res, next) => {
        seen.push({
          request: Object.getPrototypeOf(req) === http.IncomingMessage.prototype,
          response: Object.getPrototypeOf(res) === http.ServerResponse.prototype,
          admin,
        });
        handle(req, res, next);
      };
      return app;
    };
    const publicApp = createHttpApp({ logger: testLogger });
    const adminApp = createHttpApp({ logger: testLogger });
    // Express's setPrototypeOf finds nothing to change: the apps' prototypes are Node's
    for (const app of [publicApp, adminApp]) {
      expect(app.request).toBe(http.IncomingMessage.prototype);
      expect(app.response).toBe(http.ServerResponse.prototype);
    }
    const node = (req: object, res: object) =>
      Object.getPrototypeOf(req) === http.IncomingMessage.prototype &&
      Object.getPrototypeOf(res) === http.ServerResponse.prototype;
    publicApp.get('/hello', (req, res) =>
      res.json({ path: req.path, app: req.app === publicApp && res.app === publicApp, node: node(req, res) }),
    );
    adminApp.get('/admin/hello', (req, res) =>
      res.status(201).send(req.app === adminApp && res.app === adminApp && node(req, res) ? 'admin' : 'wrong app'),
    );
    finishHttpApp(publicApp, testLogger);
    finishHttpApp(adminApp, testLogger);
    const handle = await serveOnFreePorts(withProbe(publicApp, false), withProbe(adminApp, true));
    try {
      expect(await get(handle.publicPort, '/hello')).toEqual({
        status: 200,
        body: '{"path":"/hello","app":true,"node":true}',
      });
      expect(await get(handle.adminPort, '/admin/hello')).toEqual({ status: 201, body: 'admin' });
      expect(seen).toEqual([
        { request: true, response: true, admin: false },
        { request: true, response: true, admin: true },
      ]);
    } finally {
      await handle.stop();
    }
  });

  it('keep their fields in the objects themselves (V8 fast properties), through Express and an open response', () => {
    // V8's own answer (a memory and speed property: a response in dictionary mode carried 3.1 KB of fields,
    // and every open stream one), asked in a process of its own: in this test worker, earlier test files
    // leave other shapes of Node's request and response classes behind, which would change it
    const run = spawnSync(
      process.execPath,
      ['--allow-natives-syntax', '--import', 'tsx', path.join(__dirname, 'fixtures', 'fast-properties.ts')],
      { cwd: path.resolve(__dirname, '..', '..', '..'), encoding: 'utf8', timeout: 60000 },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      answer: { status: 200, body: 'retry: 3000\n\n' },
      seen: [{ request: true, response: true, socket: true }],
    });
  });

  it('give Node’s own classes Express’s methods, without replacing any of Node’s', () => {
    createHttpApp({ logger: testLogger });
    const req = new http.IncomingMessage(new net.Socket());
    const res = new http.ServerResponse(req);
    for (const name of ['get', 'accepts', 'is'])
      expect(typeof (req as unknown as Record<string, unknown>)[name]).toBe('function');
    for (const name of ['json', 'send', 'status', 'set'])
      expect(typeof (res as unknown as Record<string, unknown>)[name]).toBe('function');
    // Node's own methods are Node's: Express defines none of the same names (req.query is Express's,
    // parsed once per request: the next test)
    for (const [from, to] of [
      [express.request, http.IncomingMessage.prototype],
      [express.response, http.ServerResponse.prototype],
    ] as const)
      for (const name of Object.keys(Object.getOwnPropertyDescriptors(from)))
        if (name !== 'query')
          expect(Object.getOwnPropertyDescriptor(to, name)).toEqual(Object.getOwnPropertyDescriptor(from, name));
    expect(Object.getOwnPropertyDescriptor(http.IncomingMessage.prototype, 'query')).toMatchObject({
      get: expect.any(Function),
      set: undefined,
      enumerable: true,
    });
    expect(http.ServerResponse.prototype.writeHead).toBe(Object.getPrototypeOf(res).writeHead);
    expect(req.headers).toEqual({});
    expect(res.statusCode).toBe(200);
    expect(res.getHeaderNames()).toEqual([]);
  });

  it('parse a request’s query string once (Express 5 parses it at every read), and again when its URL changes', async () => {
    const app = createHttpApp({ logger: testLogger });
    const router = Router();
    const seen: unknown[] = [];
    app.use((req, _res, next) => {
      seen.push(req.query);
      next();
    });
    app.get('/q', (req, res) => res.json({ same: req.query === req.query && req.query === seen[0], query: req.query }));
    router.get('/inner', (req, res) => res.json({ url: req.url, same: req.query === req.query, query: req.query }));
    app.use('/mounted', router);
    finishHttpApp(app, testLogger);
    const handle = await serveOnFreePorts(app, express());
    try {
      expect(await get(handle.publicPort, '/q?a=1&b=x&b=y')).toEqual({
        status: 200,
        body: JSON.stringify({ same: true, query: { a: '1', b: ['x', 'y'] } }),
      });
      // the router strips its mount path from req.url: the query is read again from the new URL, the same
      expect(await get(handle.publicPort, '/mounted/inner?c=2')).toEqual({
        status: 200,
        body: JSON.stringify({ url: '/inner?c=2', same: true, query: { c: '2' } }),
      });
    } finally {
      await handle.stop();
    }
    // a URL rewritten after a read is parsed again
    const req = new http.IncomingMessage(new net.Socket()) as http.IncomingMessage & express.Request;
    req.app = app;
    req.url = '/x?first=1';
    const first = req.query;
    expect(req.query).toBe(first);
    expect(first).toEqual({ first: '1' });
    req.url = '/x?second=2';
    expect(req.query).toEqual({ second: '2' });
    expect(req.query).not.toBe(first);
  });
});
