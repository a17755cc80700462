import type { RawRequest, RawResponse } from './raw-http';
import type { ErrorStyle, FuzzSurface } from './fuzz-surface';

/** How the fuzzer judges an answer: from the app, no 5xx, no internals, errors in the endpoint's shape. */

/** Texts that only an internal error or a stack trace would put in a body. */
const INTERNALS = [
  /\n\s+at \S.*:\d+:\d+/,
  /\/node_modules\//,
  /\.ts:\d+/,
  /(Type|Reference|Syntax|Range|URI)Error\b/,
  /Cannot read propert/,
  /Failed to decode param/,
  /too many parameters/,
  /incorrect header check/,
  /unexpected end of file/,
  /internal_error/,
];

/** The error style a path gets: its endpoint's, or the plain JSON shape for a path no endpoint has. */
function errorStyle(surface: FuzzSurface, target: string): ErrorStyle {
  const path = target.split('?')[0].toLowerCase().replace(/\/$/, '') || '/';
  const endpoint = surface.endpoints.find((e) => {
    const pattern = e.path
      .toLowerCase()
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace('{}', '[^/]+');
    return new RegExp(`^${pattern}$`).test(path);
  });
  return endpoint?.errors ?? 'json';
}

function checkErrorShape(res: RawResponse, style: ErrorStyle): string | null {
  const type = res.headers['content-type'] ?? '';
  if (style === 'page' && type.startsWith('text/html')) return null;
  if (!type.startsWith('application/json')) return `an error with Content-Type '${type}', not JSON`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.text) as Record<string, unknown>;
  } catch {
    return 'an error body that is not JSON';
  }
  if (typeof body.code !== 'string' || typeof body.detail !== 'string') return 'an error body without code and detail';
  if (!(typeof body.attribute === 'string' || body.attribute === null)) return 'an error body without attribute';
  if (style === 'oauth' && (typeof body.error !== 'string' || typeof body.error_description !== 'string'))
    return 'a /token error without the OAuth error/error_description pair';
  return null;
}

/** What is wrong with the answer to `req`, or null. */
export function judge(surface: FuzzSurface, req: RawRequest, res: RawResponse): string | null {
  if (res.status >= 500) return `a ${res.status}`;
  if (!res.headers['x-request-id']) return `a ${res.status} that did not come from the app (no X-Request-Id)`;
  const internal = INTERNALS.find((pattern) => pattern.test(res.text));
  if (internal) return `a body showing internals (${internal})`;
  if (res.status >= 400 && req.method !== 'HEAD') return checkErrorShape(res, errorStyle(surface, req.target));
  return null;
}

export function describeRequest(req: RawRequest): string {
  const body = Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body ?? '');
  const head = JSON.stringify(body.subarray(0, 160).toString('latin1'));
  const headers = (req.headers ?? []).map(([n, v]) => `${n}: ${JSON.stringify(v.slice(0, 120))}`).join(', ');
  const framing = req.chunked ? ' chunked' : '';
  return `${req.method} ${req.target.slice(0, 300)} [${headers}]${framing} body ${body.length} bytes ${head}`;
}
