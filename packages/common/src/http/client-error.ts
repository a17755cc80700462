import type { Duplex } from 'node:stream';

type Answer = { status: number; reason: string; code: string; detail: string };

const BAD_REQUEST: Answer = {
  status: 400,
  reason: 'Bad Request',
  code: 'invalid_request',
  detail: 'The request is not valid HTTP/1.1; check its request line and headers.',
};

/** Node's parser failures by code, answered as Node does by default, but with the shared error body. */
const ANSWERS: Record<string, Answer> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    code: 'headers_too_large',
    detail: 'The request line and headers are too large; keep them under 16 KB.',
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: {
    status: 413,
    reason: 'Payload Too Large',
    code: 'payload_too_large',
    detail: 'The chunk extensions of the request body are too large.',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: 'Request Timeout',
    code: 'request_timeout',
    detail: 'The request was not received in time; send it again.',
  },
};

/**
 * The server's 'clientError' listener. A request Node cannot parse never reaches express, and Node's
 * own answer has no body; this one carries `{code, detail, attribute}` like every other error.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const response = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
    socket.destroy();
    return;
  }
  const answer = ANSWERS[err.code ?? ''] ?? BAD_REQUEST;
  const body = JSON.stringify({ code: answer.code, detail: answer.detail, attribute: null });
  socket.end(
    `HTTP/1.1 ${answer.status} ${answer.reason}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
