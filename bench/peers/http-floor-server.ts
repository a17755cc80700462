/**
 * Node's own floor: a plain `http` hello world (GET / → "hello", any other path 404), in its own
 * pinned process, with nothing between the socket and the answer. Its headers are the ones Express's
 * `res.send('hello')` sends, less the ETag and X-Powered-By: what every row is measured against.
 */
import http from 'node:http';

const port = Number(process.env.PEER_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PEER_PORT is required');
const body = Buffer.from('hello');
http
  .createServer((req, res) => {
    if (req.url !== '/' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'content-length': 9 });
      res.end('Not Found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  })
  .listen(port, '127.0.0.1', () => process.stdout.write(`node http hello world listening on ${port}\n`));
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
