/**
 * The framework's floor: an Express 5 hello world (GET / → "hello"), in its own pinned process. With
 * PEER_NODE_CLASSES=1 the app handles Node's own request and response objects, with Express's methods
 * on Node's prototypes, as Attest's apps do (packages/common/src/http/express-server.ts); the report shows
 * that variant beside the floor, which stays the stock `app.listen`.
 */
import http from 'node:http';
import express from 'express';
import { useNodeClasses } from '../../packages/common/src/http/express-server';

const port = Number(process.env.PEER_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PEER_PORT is required');
const app = express();
const nodeClasses = process.env.PEER_NODE_CLASSES === '1';
if (nodeClasses) useNodeClasses(app);
app.get('/', (_req, res) => {
  res.send('hello');
});
const ready = () => process.stdout.write(`express hello world listening on ${port}\n`);
if (nodeClasses) http.createServer(app).listen(port, '127.0.0.1', ready);
else app.listen(port, '127.0.0.1', ready);
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
