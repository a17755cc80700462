/**
 * Walks every operation of an OpenAPI document against the app that serves it (issue 40, item 14): each
 * is sent a request (valid where easy: its path and required query parameters filled from their schemas,
 * a JSON or form body when it takes one), a request with a method its path does not have, and — when it
 * reads a body — a junk body and a body of the wrong type. Each answer's status must be documented for the
 * operation (or covered by its `default`), and its Content-Type must be one the document lists for that
 * status; an answer to a method the path does not have is held to what every operation of the path
 * documents for that status. Generic: whatever a document lists is walked, so a new endpoint is covered.
 */
import http from 'node:http';
import type { Express } from 'express';
import { listen } from './raw-http';

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
  example?: unknown;
}
interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  examples?: unknown[];
  example?: unknown;
  format?: string;
  minimum?: number;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  minLength?: number;
}
interface Response {
  content?: Record<string, unknown>;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, unknown> };
  responses: Record<string, Response>;
}
export interface WalkedDocument {
  paths: Record<string, Record<string, Operation | unknown>>;
}

export interface WalkAnswer {
  status: number;
  type: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** A value for a parameter: its example, enum, default, else one of the schema's type. */
function sample(schema: Schema | undefined, example?: unknown): string {
  const pick =
    example ?? schema?.example ?? schema?.examples?.[0] ?? schema?.enum?.[0] ?? schema?.const ?? schema?.default;
  if (pick !== undefined) return Array.isArray(pick) ? pick.join(',') : String(pick);
  const inner = schema?.oneOf?.[0] ?? schema?.anyOf?.[0];
  if (inner) return sample(inner);
  const type = ([] as string[]).concat(schema?.type ?? 'string')[0];
  if (type === 'integer' || type === 'number') return String(schema?.minimum ?? 1);
  if (type === 'boolean') return 'true';
  if (type === 'array') return sample(schema?.items);
  if (schema?.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
  return 'x'.repeat(Math.max(1, schema?.minLength ?? 1));
}

interface Sent {
  method: string;
  target: string;
  headers: Record<string, string>;
  body?: string;
}

/** One request over a real socket; a stream's answer (text/event-stream) is taken at its head. */
function send(port: number, req: Sent): Promise<WalkAnswer> {
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.target,
        headers: {
          ...req.headers,
          ...(req.body !== undefined ? { 'content-length': Buffer.byteLength(req.body) } : {}),
        },
      },
      (res) => {
        const answer = { status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? '') };
        if (answer.type.startsWith('text/event-stream')) {
          res.destroy();
          return resolve(answer);
        }
        res.resume();
        res.on('end', () => resolve(answer));
        res.on('error', reject);
      },
    );
    r.setTimeout(10000, () => r.destroy(new Error(`${req.method} ${req.target}: no answer within 10 s`)));
    r.on('error', reject);
    r.end(req.body);
  });
}

const mediaType = (type: string) => type.split(';')[0].trim().toLowerCase();

/** Why `answer` is not what `operations` (each of the path's, for a method it lacks) document, or null. */
export function undocumented(operations: Operation[], answer: WalkAnswer, method: string): string | null {
  for (const op of operations) {
    const documented =
      op.responses[String(answer.status)] ?? op.responses[`${String(answer.status)[0]}XX`] ?? op.responses.default;
    if (!documented)
      return `status ${answer.status} is not documented (documented: ${Object.keys(op.responses).join(', ')})`;
    if (method === 'HEAD' || answer.status === 204 || answer.status === 304 || !answer.type) continue;
    const listed = Object.keys(documented.content ?? {}).map(mediaType);
    if (!listed.includes(mediaType(answer.type)))
      return `Content-Type ${mediaType(answer.type)} is not documented for ${answer.status} (documented: ${listed.join(', ') || 'no body'})`;
  }
  return null;
}

export interface WalkOptions {
  /** Headers sent with every request (an admin token). */
  headers?: Record<string, string>;
}

/** Every mismatch found, one line each: `METHOD /target → status type: why`. */
export async function walkDocument(
  app: Express,
  document: WalkedDocument,
  options: WalkOptions = {},
): Promise<string[]> {
  const server = await listen(app);
  const found: string[] = [];
  try {
    for (const [template, item] of Object.entries(document.paths)) {
      const operations = Object.entries(item).filter(([m]) => METHODS.includes(m)) as [string, Operation][];
      const present = operations.map(([m]) => m.toUpperCase());
      const check = async (req: Sent, against: Operation[]) => {
        const answer = await send(server.port, req);
        const why = undocumented(against, answer, req.method);
        if (why) found.push(`${req.method} ${req.target} → ${answer.status} ${mediaType(answer.type)}: ${why}`);
      };
      const paramsOf = (op: Operation) => [
        ...((item.parameters as Parameter[] | undefined) ?? []),
        ...(op.parameters ?? []),
      ];
      const pathnameOf = (op: Operation) =>
        template.replace(/\{([^}]+)\}/g, (_, name: string) => {
          const p = paramsOf(op).find((x) => x.in === 'path' && x.name === name);
          return encodeURIComponent(sample(p?.schema, p?.example));
        });
      for (const [method, op] of operations) {
        const params = paramsOf(op);
        const pathname = pathnameOf(op);
        const query = new URLSearchParams();
        for (const p of params) if (p.in === 'query' && p.required) query.set(p.name, sample(p.schema, p.example));
        const target = query.size ? `${pathname}?${query}` : pathname;
        const headers = { ...options.headers };
        const types = Object.keys(op.requestBody?.content ?? {}).map(mediaType);
        const M = method.toUpperCase();
        // valid where easy
        if (types.includes('application/json'))
          await check({ method: M, target, headers: { ...headers, 'content-type': 'application/json' }, body: '{}' }, [
            op,
          ]);
        else if (types.includes('application/x-www-form-urlencoded'))
          await check(
            {
              method: M,
              target,
              headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
              body: '',
            },
            [op],
          );
        else await check({ method: M, target, headers }, [op]);
        // a junk body, and a body of a type it does not read
        if (types.length || ['POST', 'PUT', 'PATCH'].includes(M)) {
          const declared = types[0] ?? 'application/json';
          await check({ method: M, target, headers: { ...headers, 'content-type': declared }, body: '{"junk' }, [op]);
          await check({ method: M, target, headers: { ...headers, 'content-type': 'text/plain' }, body: 'junk' }, [op]);
        }
      }
      // a method the path does not have: held to what every operation of the path documents
      const any = operations[0]?.[1];
      if (!any) continue;
      const pathname = pathnameOf(any);
      for (const wrong of ['SEARCH', ['PUT', 'DELETE', 'PATCH', 'POST'].find((m) => !present.includes(m))])
        if (wrong)
          await check(
            { method: wrong, target: pathname, headers: { ...options.headers } },
            operations.map(([, op]) => op),
          );
    }
  } finally {
    await server.close();
  }
  return found;
}
