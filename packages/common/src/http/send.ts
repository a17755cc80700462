import type { Response } from 'express';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends a JSON answer with Node's own response calls. Express's res.json and res.send redo per
 * request what is fixed here (settings lookups, content-type parsing, charset handling), which the
 * profiles of the hot endpoints showed. HEAD gets the same headers without the body (Node drops it).
 */
export function sendJson(res: Response, value: unknown, status = 200): void {
  sendJsonBody(res, JSON.stringify(value), status);
}

/**
 * Sends a body that is already JSON text (a prepared answer). The status line and headers are fixed
 * at once (`res.headersSent` is true on return, and a later setHeader throws, as after `end`); the
 * body is written with the other answers of this turn of the event loop (see `endThisTurn`).
 */
export function sendJsonBody(res: Response, body: string | Buffer, status = 200): void {
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.writeHead(status);
  endThisTurn(res, body);
}

/** Answers waiting for the end of this turn of the event loop: response, body, response, body, … */
let waiting: Array<Response | string | Buffer> = [];

/**
 * Ends `res` with `body` once every request read in this turn of the event loop has been handled
 * (setImmediate: the check phase, right after the poll phase that read them), not at once.
 *
 * Why: writing an answer to a socket whose peer is asleep in epoll_wait makes the kernel wake that
 * peer inside our write (sock_def_readable, try_to_wake_up; in a VM an inter-processor interrupt),
 * on our core. Written one by one as they were made, a busy server woke its peer for almost every
 * answer: in `perf record -a -g` of the cached transaction lookup (`pnpm bench --scenario tx-hit`),
 * writev was 20 % of the server's time and the wake-ups half of that, 12 µs an answer against 1 µs
 * in Node's plain hello world, whose peer never sleeps. Written together, the first answer of a turn
 * wakes the peer and the rest find it awake: the lookup served 14,000/s instead of 9,200/s, and its
 * p99 fell (bench/README.md, "Answers written together"). Under light load a turn holds one request,
 * and the answer goes out in the same turn, as before.
 */
function endThisTurn(res: Response, body: string | Buffer): void {
  if (waiting.length === 0) setImmediate(endWaiting);
  waiting.push(res, body);
}

function endWaiting(): void {
  const answers = waiting;
  waiting = [];
  for (let i = 0; i < answers.length; i += 2) {
    const res = answers[i] as Response;
    try {
      res.end(answers[i + 1]);
    } catch (err) {
      // one answer that cannot be written must not keep the others of its turn from theirs
      res.destroy(err as Error);
    }
  }
}
