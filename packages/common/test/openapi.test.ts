import { Router } from 'express';
import Joi from 'joi';
import request from 'supertest';
import {
  createServiceApps,
  documentAdminRoute,
  documentRoute,
  endpoint,
  errorResponse,
  excludedFromApi,
  jsonResponse,
  validate,
} from '../src';
import { testLogger, undocumentedRoutes } from './support';

const BODY = Joi.object({ name: Joi.string().max(10).required().description('What to call it') });

function build(extra?: (router: Router) => void) {
  return createServiceApps({
    service: 'kit',
    logger: testLogger,
    readiness: { shuttingDown: false, checks: [] },
    adminToken: 'a'.repeat(40),
    trustProxy: 'false',
    bodyLimit: '1kb',
    publicApi: { title: 'Kit', version: '3', serverUrl: 'https://kit.example' },
    publicRoutes(router) {
      endpoint(
        router,
        '/things/:id',
        { GET: [(_req, res) => void res.json({ ok: true })], POST: [(_req, res) => void res.status(201).end()] },
        {
          GET: {
            summary: 'A thing',
            params: Joi.object({ id: Joi.string().pattern(/^t_\d+$/) }),
            query: Joi.object({ full: Joi.boolean(), fields: Joi.string().required() }),
            responses: { 200: jsonResponse('The thing', { type: 'object' }), 404: errorResponse('not_found') },
          },
          POST: { summary: 'Make a thing', body: { contentType: 'application/json', schema: BODY }, responses: {} },
        },
      );
      endpoint(router, '/static.css', { GET: [(_req, res) => void res.end()] }, excludedFromApi('a static file'));
      extra?.(router);
    },
    adminRoutes(router) {
      documentRoute(router, 'GET', '/documented', { summary: 'Documented by hand', responses: {} });
      router.get('/documented', (_req, res) => void res.json({}));
      documentAdminRoute(router, 'POST', '/named', {
        summary: 'Name something',
        body: { contentType: 'application/json', schema: BODY },
        responses: {
          201: jsonResponse('Named', BODY),
          400: errorResponse('required or invalid_parameter naming the field'),
        },
      });
      router.post('/named', (req, res) => void res.status(201).json(validate(BODY, req.body)));
    },
  });
}

it('builds the OpenAPI 3.1 document from the routes’ docs, the joi schemas converted', async () => {
  const { publicApp } = build();
  const res = await request(publicApp).get('/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('public, max-age=3600');
  expect(res.headers['access-control-allow-origin']).toBe('*');
  expect(res.body.info).toEqual({ title: 'Kit', version: '3' });
  expect(res.body.servers).toEqual([{ url: 'https://kit.example' }]);
  expect(res.body.components.schemas.Error.required).toEqual(['code', 'detail', 'attribute']);
  const thing = res.body.paths['/things/{id}'];
  expect(thing.get.parameters).toEqual([
    { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^t_\\d+$' } },
    { name: 'full', in: 'query', required: false, schema: { type: 'boolean' } },
    { name: 'fields', in: 'query', required: true, schema: { type: 'string' } },
  ]);
  expect(thing.post.requestBody).toEqual({
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          properties: { name: { type: 'string', maxLength: 10, description: 'What to call it' } },
          required: ['name'],
          additionalProperties: false,
        },
      },
    },
  });
  expect(res.body.paths).not.toHaveProperty('/static.css');
  expect(Object.keys(res.body.paths).sort()).toEqual(['/docs', '/healthz', '/openapi.json', '/readyz', '/things/{id}']);
});

it('names every route that has neither a document nor an exclusion', () => {
  const documented = build();
  expect(undocumentedRoutes(documented.publicApp)).toEqual([]);
  const adminMissing = undocumentedRoutes(documented.adminApp);
  for (const route of ['GET /admin/documented', 'GET /metrics', 'GET /healthz', 'GET /openapi.json'])
    expect(adminMissing).not.toContain(route);
  const forgotten = build((router) => {
    endpoint(router, '/forgotten', { GET: [(_req, res) => void res.end()], DELETE: [(_req, res) => void res.end()] });
    router.post('/raw', (_req, res) => void res.end());
  });
  expect(undocumentedRoutes(forgotten.publicApp)).toEqual(['GET /forgotten', 'DELETE /forgotten', 'POST /raw']);
});

it('serves Swagger UI at /docs from its own files, under a CSP that allows only them', async () => {
  const { publicApp, adminApp } = build();
  const page = await request(publicApp).get('/docs');
  expect(page.status).toBe(200);
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  expect(page.headers['content-security-policy']).toContain("script-src 'self'");
  expect(page.headers['content-security-policy']).toContain("default-src 'none'");
  const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  expect(sources).toEqual([
    '/docs/favicon-32x32.png',
    '/docs/swagger-ui.css',
    '/docs/swagger-ui-bundle.js',
    '/docs/init.js',
  ]);
  for (const source of sources) {
    const asset = await request(publicApp).get(source);
    expect({ source, status: asset.status }).toEqual({ source, status: 200 });
    expect(asset.headers['content-type']).toMatch(/^(text\/(css|javascript)|image\/png)/);
  }
  expect((await request(publicApp).get('/docs/init.js')).text).toContain("url: '/openapi.json'");
  // the admin port has its own document, readable without the admin token
  const admin = await request(adminApp).get('/openapi.json');
  expect(admin.status).toBe(200);
  expect(admin.body.info.title).toBe('kit admin API');
  expect(admin.body.paths).toHaveProperty(['/admin/documented', 'get']);
  expect(admin.body.paths).toHaveProperty(['/metrics', 'get']);
  expect((await request(adminApp).get('/docs')).status).toBe(200);
});

it('documents admin operations behind the adminToken bearer scheme, and reads a missing admin body as {}', async () => {
  const { adminApp } = build();
  const doc = (await request(adminApp).get('/openapi.json').expect(200)).body;
  expect(doc.components.securitySchemes).toEqual({
    adminToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
  });
  const named = doc.paths['/admin/named'].post;
  expect(named.security).toEqual([{ adminToken: [] }]);
  expect(Object.keys(named.responses).sort()).toEqual(['201', '400', '401', '405', '413', '415', '500', '503']);
  expect(named.responses['400'].description).toMatch(/^required or invalid_parameter naming the field; invalid_body/);
  expect(named.responses['401'].headers).toHaveProperty('WWW-Authenticate');
  expect(doc.paths['/metrics'].get.security).toBeUndefined();
  const admin = () =>
    request(adminApp)
      .post('/admin/named')
      .set('Authorization', `Bearer ${'a'.repeat(40)}`);
  expect((await admin().send({ name: 'x' })).status).toBe(201);
  // no body, or one that is not JSON: the validation names the missing field
  for (const res of [await admin(), await admin().type('text').send('name=x')]) {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'required', detail: 'This attribute is required.', attribute: 'name' });
  }
  const unauthenticated = await request(adminApp).post('/admin/named').send({ name: 'x' });
  expect(unauthenticated.status).toBe(401);
  expect(unauthenticated.headers['www-authenticate']).toBe('Bearer realm="admin"');
});
