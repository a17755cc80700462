import { createHash } from 'node:crypto';

/** A JSON document serialised once, with its ETag (the weak form express would compute per request). */
export interface PreparedJson {
  body: Buffer;
  etag: string;
}

export function prepareJson(value: unknown): PreparedJson {
  return prepareJsonBuffer(Buffer.from(JSON.stringify(value)));
}

export function prepareJsonBuffer(body: Buffer): PreparedJson {
  const hash = createHash('sha1').update(body).digest('base64').slice(0, 27);
  return { body, etag: `W/"${body.length.toString(16)}-${hash}"` };
}
