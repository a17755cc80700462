import type { Server } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

/** An app listening on a loopback port, for tests that send raw bytes over a real socket. */
export interface Listening {
  port: number;
  close(): Promise<void>;
}

export function listen(app: Express): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server: Server = app.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        port,
        close: () => new Promise<void>((done) => (server.closeAllConnections(), server.close(() => done()))),
      });
    });
    server.once('error', reject);
  });
}

export interface RawResponse {
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
}

/** No complete answer within the deadline: a hang (`timeout`), or the server dropped the connection (`closed`). */
export interface NoResponse {
  status: 'timeout' | 'closed';
  partial: string;
}

export interface RawRequest {
  method: string;
  /** Sent as is in the request line: no encoding is applied. */
  target: string;
  headers?: [string, string][];
  body?: Buffer | string;
  /** Send the body with Transfer-Encoding: chunked instead of Content-Length. */
  chunked?: boolean;
}

/** The request bytes; Host and Connection: close are added, Content-Length or chunked framing matches the body. */
export function requestBytes(req: RawRequest): Buffer {
  const body = typeof req.body === 'string' ? Buffer.from(req.body, 'utf8') : (req.body ?? Buffer.alloc(0));
  const lines = [`${req.method} ${req.target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of req.headers ?? []) lines.push(`${name}: ${value}`);
  if (req.chunked) lines.push('Transfer-Encoding: chunked');
  else if (body.length > 0 || ['POST', 'PUT', 'PATCH'].includes(req.method))
    lines.push(`Content-Length: ${body.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  if (!req.chunked) return Buffer.concat([head, body]);
  const chunk = body.length
    ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')])
    : Buffer.alloc(0);
  return Buffer.concat([head, chunk, Buffer.from('0\r\n\r\n')]);
}

function dechunk(data: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) return Buffer.concat(parts);
    if (data.length < eol + 2 + size + 2) return null;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** A complete response in `data`, or null while more bytes are needed (`ended`: the server closed). */
export function parseResponse(data: Buffer, method: string, ended: boolean): RawResponse | null {
  const split = data.indexOf('\r\n\r\n');
  if (split < 0) return null;
  const [statusLine, ...headerLines] = data.subarray(0, split).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!status) return null;
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const rest = data.subarray(split + 4);
  // an interim answer (100 Continue) comes before the real one
  if (status < 200) return parseResponse(rest, method, ended);
  let body: Buffer | null;
  if (method === 'HEAD' || status === 204 || status === 304) body = Buffer.alloc(0);
  else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(rest);
  else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    body = rest.length >= length ? rest.subarray(0, length) : null;
  } else body = ended ? rest : null;
  return body ? { status, headers, body, text: body.toString('utf8') } : null;
}

/**
 * Sends raw request bytes and reads one response. Resolves with `timeout` when no complete response
 * arrives within `deadlineMs`: the request hung.
 */
export function rawRequest(
  port: number,
  req: RawRequest | Buffer,
  deadlineMs = 5000,
): Promise<RawResponse | NoResponse> {
  const bytes = Buffer.isBuffer(req) ? req : requestBytes(req);
  const method = (Buffer.isBuffer(req) ? bytes.toString('latin1', 0, 16).split(' ')[0] : req.method).toUpperCase();
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (result: RawResponse | NoResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const partial = () => Buffer.concat(chunks).toString('latin1').slice(0, 500);
    const timer = setTimeout(() => finish({ status: 'timeout', partial: partial() }), deadlineMs);
    const check = (ended: boolean) => {
      const parsed = parseResponse(Buffer.concat(chunks), method, ended);
      if (parsed) finish(parsed);
      else if (ended) finish({ status: 'closed', partial: partial() });
    };
    socket.on('data', (chunk: Buffer) => (chunks.push(chunk), check(false)));
    socket.on('end', () => check(true));
    // the server may answer (413, 400) and close before it has read a large body: keep what arrived
    socket.on('error', () => check(true));
    socket.on('close', () => check(true));
    socket.write(bytes, () => undefined);
  });
}

export const answered = (res: RawResponse | NoResponse): res is RawResponse => typeof res.status === 'number';

/** rawRequest that must be answered: a hang or a dropped connection throws, naming the request. */
export async function answeredRequest(port: number, req: RawRequest): Promise<RawResponse> {
  const res = await rawRequest(port, req);
  if (!answered(res)) throw new Error(`${req.method} ${req.target}: no answer (${res.status}) ${res.partial}`);
  return res;
}

/** Malformed percent-encodings for a path segment: each must be a 400 naming the parameter, never a 500. */
export const MALFORMED_SEGMENTS = ['%zz', '%', '%ff%fe', '%c0%ae', '%E0%A4%A', '%u0041'];

/** The answer to a path segment in MALFORMED_SEGMENTS: a 400 in the JSON error shape naming the parameter. */
export function expectMalformedSegmentRefused(res: RawResponse, parameter: string): void {
  expect(res.status).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(res.text)).toEqual({
    code: 'invalid_parameter',
    detail: `${parameter} is not valid percent-encoded UTF-8 (write each byte as %XX, two hexadecimal digits).`,
    attribute: parameter,
  });
}
