import type { Request, Response } from 'express';
import type { PreparedJson } from './prepared-json';

const WEAK = /^W\//;

/**
 * The request's cached copy is current: If-None-Match names the document's ETag (weak comparison,
 * RFC 9110 §13.1.2) or is `*`, and the client did not ask to skip caches (what express's req.fresh
 * decides, without its general header parsing).
 */
function fresh(req: Request, etag: string): boolean {
  const match = req.headers['if-none-match'];
  if (!match || /(?:^|,)\s*no-cache\s*(?:$|,)/.test(req.headers['cache-control'] ?? '')) return false;
  if (match.trim() === '*') return true;
  const ours = etag.replace(WEAK, '');
  return match.split(',').some((tag) => tag.trim().replace(WEAK, '') === ours);
}

/**
 * Sends a prepared document (body, ETag and length computed once), or 304 when the client's copy
 * is current. Written with Node's own response calls: express's send would redo per request what
 * is fixed here (content-type parsing, length, freshness).
 */
export function sendPrepared(req: Request, res: Response, doc: PreparedJson, cacheControl: string): void {
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('ETag', doc.etag);
  if (fresh(req, doc.etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', doc.body.length);
  res.end(doc.body);
}
