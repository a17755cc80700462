import type { Router } from 'express';
import { endpoint } from './endpoint';

export type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string };
  servers: { url: string }[];
  paths: Record<string, unknown>;
  components?: Record<string, unknown>;
};

/** The shared error body, for every service's document. */
export const ERROR_SCHEMA = {
  type: 'object',
  required: ['code', 'detail', 'attribute'],
  properties: {
    code: { type: 'string', description: 'Machine-readable error code.' },
    detail: { type: 'string', description: 'A sentence for a person.' },
    attribute: { type: ['string', 'null'], description: 'The offending field, or null.' },
  },
};

export const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const RATE_LIMIT_HEADERS = {
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
export const countedErrorResponse = (description: string) => ({
  ...errorResponse(description),
  headers: RATE_LIMIT_HEADERS,
});

/** 429 too_many_requests after too many failed attempts. */
export const tooManyRequestsResponse = (counted: string) => ({
  ...errorResponse(
    `too_many_requests: too many failed attempts (${counted}) from this client id, key id or address; ` +
      'refused even with the right credentials until Retry-After has passed',
  ),
  headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } }, ...RATE_LIMIT_HEADERS },
});

/** GET /openapi.json: the service's API document (public, cacheable, open CORS). */
export function openApiRoute(router: Router, document: OpenApiDocument): void {
  endpoint(router, '/openapi.json', {
    GET: [
      (_req, res) =>
        void res.set({ 'Cache-Control': 'public, max-age=3600', 'Access-Control-Allow-Origin': '*' }).json(document),
    ],
  });
}
