import request from 'supertest';
import { createServiceApps, endpoint, errors, jsonResponse } from '../src';
import { testLogger } from './support';

/** An app whose answers can be made to differ from its document. */
function build(answer: { status: number; body: unknown }) {
  return createServiceApps({
    logger: testLogger,
    readiness: { shuttingDown: false, checks: [] },
    adminToken: 'a'.repeat(40),
    trustProxy: 'false',
    bodyLimit: '1kb',
    publicRoutes(router) {
      endpoint(
        router,
        '/things/:id',
        {
          GET: [(_req, res) => void res.status(answer.status).json(answer.body)],
          POST: [() => Promise.reject(errors.notFound('No such thing.', 'id'))],
        },
        {
          GET: {
            summary: 'A thing',
            responses: {
              200: jsonResponse('The thing', {
                type: 'object',
                required: ['name'],
                properties: { name: { type: 'string' } },
              }),
            },
          },
          POST: { summary: 'Change a thing', responses: { 204: { description: 'Changed' } } },
        },
      );
      endpoint(router, '/undocumented', { GET: [(_req, res) => void res.status(418).json({ any: 'thing' })] });
    },
    adminRoutes() {},
  }).publicApp;
}

describe('every supertest response is checked against the app’s OpenAPI document', () => {
  it('passes a documented status with a body of the documented schema', async () => {
    const res = await request(build({ status: 200, body: { name: 'a' } })).get('/things/1');
    expect(res.body).toEqual({ name: 'a' });
  });

  it('fails a body that does not match, naming the path, status and what ajv found', async () => {
    await expect(request(build({ status: 200, body: { name: 7 } })).get('/things/1')).rejects.toThrow(
      /OpenAPI \(.*\): GET \/things\/1 → 200: the body does not match the documented schema: data\/name must be string/,
    );
  });

  it('fails a status the operation does not document', async () => {
    await expect(request(build({ status: 200, body: {} })).post('/things/1')).rejects.toThrow(
      /POST \/things\/1 → 404: status 404 is not documented for POST \/things\/\{id\}/,
    );
  });

  it('fails a JSON body where the document has none', async () => {
    await expect(request(build({ status: 201, body: {} })).get('/things/1')).rejects.toThrow(
      /status 201 is not documented/,
    );
  });

  it('holds a method the path does not have to the shared error, and leaves unlisted routes alone', async () => {
    const app = build({ status: 200, body: { name: 'a' } });
    const refused = await request(app).delete('/things/1');
    expect(refused.status).toBe(405);
    expect((await request(app).get('/undocumented')).status).toBe(418);
    expect((await request(app).get('/nowhere')).status).toBe(404);
  });
});
