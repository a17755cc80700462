/**
 * The framework's floor: an Express 5 hello world (GET / → "hello"), in its own pinned process. With
 * PEER_APP_PROTOTYPES=1 its server makes requests and responses with the app's prototypes from the
 * start, as Attest's listeners do (packages/common/src/http/express-server.ts); the report shows that
 * variant beside the floor, which stays the stock `app.listen`.
 */
import http from 'node:http';
import express from 'express';
import { expressServerOptions } from '../../packages/common/src/http/express-server';

const port = Number(process.env.PEER_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PEER_PORT is required');
const app = express();
app.get('/', (_req, res) => {
  res.send('hello');
});
const ready = () => process.stdout.write(`express hello world listening on ${port}\n`);
if (process.env.PEER_APP_PROTOTYPES === '1')
  http.createServer(expressServerOptions(app), app).listen(port, '127.0.0.1', ready);
else app.listen(port, '127.0.0.1', ready);
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
