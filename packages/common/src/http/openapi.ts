import fs from 'node:fs';
import path from 'node:path';
import type { Express, Request, Response, Router } from 'express';
import {
  buildOpenApiDocument,
  excludedFromApi,
  type ApiInfo,
  type ApiRegistry,
  type HeaderDoc,
  type JsonSchema,
  type OpenApiDocument,
  type ResponseDoc,
  type SchemaLike,
} from './api-registry';
import { endpoint } from './endpoint';

export * from './api-registry';

/** The shared error body, for every service's document. */
export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['code', 'detail', 'attribute'],
  properties: {
    code: { type: 'string', description: 'Machine-readable error code.' },
    detail: { type: 'string', description: 'A sentence for a person.' },
    attribute: { type: ['string', 'null'], description: 'The offending field, or null.' },
  },
};

const ERROR_REF = { $ref: '#/components/schemas/Error' };

export const errorResponse = (description: string, headers?: Record<string, HeaderDoc>): ResponseDoc => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: ERROR_REF } },
});

/** A JSON body (the schema a joi object or a JSON Schema). */
export const jsonResponse = (
  description: string,
  schema: SchemaLike,
  headers?: Record<string, HeaderDoc>,
): ResponseDoc => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema } },
});

/** An HTML page. */
export const htmlResponse = (description: string, headers?: Record<string, HeaderDoc>): ResponseDoc => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'text/html': { schema: { type: 'string' } } },
});

/** A response of another media type (scripts, stylesheets, text). */
export const textResponse = (description: string, mediaType: string): ResponseDoc => ({
  description,
  content: { [mediaType]: { schema: { type: 'string' } } },
});

/**
 * A redirect: its Location header says where to; the body is Express's short note naming it (plain text,
 * or HTML when the client accepts HTML; none when it accepts neither).
 */
export const redirectResponse = (description: string): ResponseDoc => ({
  description,
  headers: { Location: { description: 'Where to go next', schema: { type: 'string' } } },
  content: { 'text/plain': { schema: { type: 'string' } }, 'text/html': { schema: { type: 'string' } } },
});

/** A response without a body (304, 204). */
export const emptyResponse = (description: string, headers?: Record<string, HeaderDoc>): ResponseDoc => ({
  description,
  ...(headers ? { headers } : {}),
});

const RATE_LIMIT_HEADERS: Record<string, HeaderDoc> = {
  'RateLimit-Policy': {
    description:
      'draft-ietf-httpapi-ratelimit-headers: the failure limits that apply, e.g. "per-id-and-address";q=10;w=900',
    schema: { type: 'string' },
  },
  RateLimit: {
    description:
      'Failures left (r) and seconds until the window ends (t) per limit, e.g. "per-id-and-address";r=0;t=512',
    schema: { type: 'string' },
  },
};

/** An error response that counted a failed attempt: it carries the RateLimit fields. */
export const countedErrorResponse = (description: string): ResponseDoc => ({
  ...errorResponse(description),
  headers: RATE_LIMIT_HEADERS,
});

/** 429 too_many_requests after too many failed attempts. */
export const tooManyRequestsResponse = (counted: string): ResponseDoc => ({
  ...errorResponse(
    `too_many_requests: too many failed attempts (${counted}) from this client id, key id or address; ` +
      'refused even with the right credentials until Retry-After has passed',
  ),
  headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } }, ...RATE_LIMIT_HEADERS },
});

/** The errors of reading a request body, for routes that read one. */
export const bodyErrorResponses = (badRequest: string): Record<number, ResponseDoc> => ({
  400: errorResponse(
    `${badRequest}; invalid_body: a body that cannot be read (not valid JSON or form data, cut short, badly compressed)`,
  ),
  413: errorResponse('payload_too_large: over BODY_LIMIT, or more than 100 form fields'),
  415: errorResponse('unsupported_encoding (Content-Encoding), unsupported_charset'),
});

interface ServedApi {
  info: ApiInfo;
  registry: ApiRegistry;
  document(): OpenApiDocument;
}

const documents = new WeakMap<object, ServedApi>();

/** The API an app serves at /openapi.json (tests validate responses against it). */
export function servedApiOf(app: Express): ServedApi | undefined {
  return documents.get(app);
}

const swaggerUiDir = () => path.dirname(require.resolve('swagger-ui-dist/package.json'));
const swaggerUiFiles = new Map<string, Buffer>();
/** A Swagger UI file, read on first use and kept (one copy for every app of the process). */
const swaggerUiFile = (name: string) => {
  let body = swaggerUiFiles.get(name);
  if (!body) swaggerUiFiles.set(name, (body = fs.readFileSync(path.join(swaggerUiDir(), name))));
  return body;
};
const DOCS_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });\n`;
const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
/** Swagger UI's own files only: scripts and styles from this origin, the document fetched from it. */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/**
 * GET /openapi.json (the document built from `registry`, public, cacheable, open CORS) and GET /docs
 * (Swagger UI, every file of it served from here). Call it after every other route is mounted on `router`.
 */
export function openApiRoutes(app: Express, router: Router, registry: ApiRegistry, info: ApiInfo): void {
  let built: OpenApiDocument | undefined;
  const document = () => (built ??= buildOpenApiDocument(info, registry, ERROR_SCHEMA));
  documents.set(app, { info, registry, document });
  endpoint(
    router,
    '/openapi.json',
    {
      GET: [
        (_req, res) =>
          void res
            .set({ 'Cache-Control': 'public, max-age=3600', 'Access-Control-Allow-Origin': '*' })
            .json(document()),
      ],
    },
    {
      GET: {
        summary: 'This OpenAPI 3.1 document',
        tags: ['documentation'],
        responses: { 200: jsonResponse('The document (cacheable; CORS open to any origin)', { type: 'object' }) },
      },
    },
  );
  const page =
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${escapeHtml(info.title)} API</title>\n` +
    '<link rel="icon" href="/docs/favicon-32x32.png">\n<link rel="stylesheet" href="/docs/swagger-ui.css">\n</head>\n<body>\n<div id="swagger-ui"></div>\n' +
    '<script src="/docs/swagger-ui-bundle.js"></script>\n<script src="/docs/init.js"></script>\n</body>\n</html>\n';
  const headers = { 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' };
  endpoint(
    router,
    '/docs',
    {
      GET: [
        (_req, res) =>
          void res
            .set({ ...headers, 'Content-Security-Policy': DOCS_CSP })
            .type('html')
            .send(page),
      ],
    },
    {
      GET: {
        summary: 'This API, browsable (Swagger UI)',
        tags: ['documentation'],
        responses: { 200: htmlResponse('Swagger UI showing /openapi.json; its files are served from /docs/') },
      },
    },
  );
  endpoint(
    router,
    '/docs/init.js',
    { GET: [(_req, res) => void res.set(headers).type('text/javascript; charset=utf-8').send(DOCS_INIT)] },
    excludedFromApi('a file of the /docs page'),
  );
  for (const [name, type] of Object.entries(DOCS_ASSETS)) {
    const send = (_req: Request, res: Response) => void res.set(headers).type(type).send(swaggerUiFile(name));
    endpoint(router, `/docs/${name}`, { GET: [send] }, excludedFromApi('a file of the /docs page (Swagger UI)'));
  }
}
