import type { Response } from 'express';
import type { PreparedJson } from '../domain/prepared-json';

/** Sends a prepared document; express answers 304 itself when the client's ETag matches. */
export function sendPrepared(res: Response, doc: PreparedJson, cacheControl: string): void {
  res
    .set({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': cacheControl, ETag: doc.etag })
    .send(doc.body);
}
