import type { Router } from 'express';
import { endpoint } from './endpoint';

export type OpenApiDocument = { openapi: '3.1.0'; info: { title: string; version: string; description?: string }; servers: { url: string }[]; paths: Record<string, unknown>; components?: Record<string, unknown> };

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

export const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

/** GET /openapi.json: the service's API document (public, cacheable, open CORS). */
export function openApiRoute(router: Router, document: OpenApiDocument): void {
  endpoint(router, '/openapi.json', {
    GET: [(_req, res) => void res.set({ 'Cache-Control': 'public, max-age=3600', 'Access-Control-Allow-Origin': '*' }).json(document)],
  });
}
