/** The framework's floor: an Express 5 hello world (GET / → "hello"), in its own pinned process. */
import express from 'express';

const port = Number(process.env.PEER_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PEER_PORT is required');
const app = express();
app.get('/', (_req, res) => {
  res.send('hello');
});
app.listen(port, '127.0.0.1', () => process.stdout.write(`express hello world listening on ${port}\n`));
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
