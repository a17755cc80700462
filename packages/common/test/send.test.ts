import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Response } from 'express';
import { sendJson, sendJsonBody } from '../src';

/** A plain Node server whose handler is given each request; closed after each test. */
async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Seen {
  headersSent: boolean;
  endedAtReturn: boolean;
  endedAfterMicrotasks: boolean;
  endedAfterThisTurn: boolean;
  lateHeader: string;
}

/** What setHeader does once the answer is made: the error's code, or 'accepted'. */
function trySetHeader(res: ServerResponse): string {
  try {
    res.setHeader('X-Late', '1');
    return 'accepted';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'no code';
  }
}

describe('sendJsonBody: answers written together at the end of the turn', () => {
  it('fixes status and headers at once, and writes the body once the turn is over', async () => {
    const seen: Seen[] = [];
    const server = await serve((_req, res) => {
      sendJsonBody(res as unknown as Response, '{"ok":true}', 201);
      const state: Seen = {
        headersSent: res.headersSent,
        endedAtReturn: res.writableEnded,
        endedAfterMicrotasks: false,
        endedAfterThisTurn: false,
        // a header set after the answer was made is refused, as after end()
        lateHeader: trySetHeader(res),
      };
      seen.push(state);
      queueMicrotask(() => (state.endedAfterMicrotasks = res.writableEnded));
      setImmediate(() => (state.endedAfterThisTurn = res.writableEnded));
    });
    try {
      const answer = await fetch(`${server.url}/`);
      expect(answer.status).toBe(201);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(answer.headers.get('content-length')).toBe('11');
      expect(answer.headers.get('x-late')).toBeNull();
      expect(await answer.json()).toEqual({ ok: true });
      expect(seen).toEqual([
        {
          headersSent: true,
          endedAtReturn: false,
          endedAfterMicrotasks: false,
          endedAfterThisTurn: true,
          lateHeader: 'ERR_HTTP_HEADERS_SENT',
        },
      ]);
    } finally {
      await server.close();
    }
  });

  it('counts the bytes of a non-ASCII body, and sends Buffers as they are', async () => {
    const server = await serve((req, res) =>
      req.url === '/buffer'
        ? sendJsonBody(res as unknown as Response, Buffer.from('{"n":1}'))
        : sendJson(res as unknown as Response, { name: 'Zoë ✓' }),
    );
    try {
      const text = await fetch(`${server.url}/text`);
      expect(text.headers.get('content-length')).toBe(String(Buffer.byteLength('{"name":"Zoë ✓"}')));
      expect(await text.json()).toEqual({ name: 'Zoë ✓' });
      const buffer = await fetch(`${server.url}/buffer`);
      expect(buffer.status).toBe(200);
      expect(await buffer.json()).toEqual({ n: 1 });
    } finally {
      await server.close();
    }
  });

  it('answers made in one turn all go out, even when one of them cannot be written', async () => {
    const held: ServerResponse[] = [];
    const server = await serve((_req, res) => {
      held.push(res);
      if (held.length < 3) return;
      // the three answers are made in one turn; the first one's end throws
      held[0].end = () => {
        throw new Error('cannot write');
      };
      held.forEach((r, i) => sendJsonBody(r as unknown as Response, JSON.stringify({ i })));
    });
    try {
      const answers = await Promise.allSettled([0, 1, 2].map((i) => fetch(`${server.url}/${i}`).then((r) => r.json())));
      const bodies = answers
        .filter((a) => a.status === 'fulfilled')
        .map((a) => (a as PromiseFulfilledResult<unknown>).value);
      expect(bodies).toEqual(expect.arrayContaining([{ i: 1 }, { i: 2 }]));
      expect(bodies).toHaveLength(2);
      expect(answers.filter((a) => a.status === 'rejected')).toHaveLength(1);
      expect(held[0].destroyed).toBe(true);
    } finally {
      await server.close();
    }
  });
});
