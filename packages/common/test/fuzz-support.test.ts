import { judge, parseResponse, type FuzzSurface, type RawResponse } from './support';

const surface: FuzzSurface = {
  endpoints: [
    { path: '/token', errors: 'oauth', methods: ['POST'] },
    { path: '/signin', errors: 'page', methods: ['GET'] },
    { path: '/things/{}', errors: 'json', methods: ['GET'] },
  ],
  names: ['a'],
  values: ['b'],
  headers: [['Authorization', 'Basic x']],
};

const shape = { code: 'invalid_request', detail: 'The a parameter must be given once.', attribute: 'a' };
function response(status: number, body: unknown, headers: Record<string, string> = {}): RawResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const type = typeof body === 'string' ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8';
  return { status, headers: { 'x-request-id': 'r1', 'content-type': type, ...headers }, body: Buffer.from(text), text };
}
const get = (target: string) => ({ method: 'GET', target });

/** The fuzz suite's judge must flag each kind of wrong answer, or the suite proves nothing. */
describe('fuzz support', () => {
  it('accepts answers in the promised shape', () => {
    expect(judge(surface, get('/things/1'), response(400, shape))).toBeNull();
    expect(
      judge(surface, get('/token'), response(400, { ...shape, error: 'invalid_request', error_description: 'x' })),
    ).toBeNull();
    expect(
      judge(surface, get('/signin?x'), response(400, '<p>Error code: <code id="error-code">x</code></p>')),
    ).toBeNull();
    expect(judge(surface, get('/things/1'), response(200, 'plain success'))).toBeNull();
    expect(judge(surface, { method: 'HEAD', target: '/things/1' }, response(404, ''))).toBeNull();
  });

  it('flags 5xx, answers not from the app, internals, and errors out of shape', () => {
    expect(judge(surface, get('/things/1'), response(500, shape))).toBe('a 500');
    expect(judge(surface, get('/things/1'), response(503, shape))).toBe('a 503');
    const bare = { ...response(400, ''), headers: {} };
    expect(judge(surface, get('/things/1'), bare)).toMatch(/did not come from the app/);
    const stack = { ...shape, detail: 'TypeError: x\n    at handle (/app/src/routes/steps.ts:12:5)' };
    expect(judge(surface, get('/things/1'), response(400, stack))).toMatch(/internals/);
    expect(judge(surface, get('/things/1'), response(400, 'Bad Request'))).toMatch(/not JSON/);
    expect(judge(surface, get('/things/1'), response(400, { message: 'x' }))).toMatch(/without code and detail/);
    expect(judge(surface, get('/things/1'), response(400, { code: 'x', detail: 'y' }))).toMatch(/without attribute/);
    expect(judge(surface, get('/TOKEN/'), response(400, shape))).toMatch(/OAuth/);
    expect(judge(surface, get('/nowhere'), response(404, '<html>'))).toMatch(/not JSON/);
  });

  it('reads responses framed by Content-Length or chunks, after a 100 Continue, and waits for the rest', () => {
    const framed = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello');
    expect(parseResponse(framed, 'GET', false)).toMatchObject({ status: 200, text: 'hello', headers: { 'x-a': '1' } });
    expect(parseResponse(framed.subarray(0, framed.length - 1), 'GET', false)).toBeNull();
    const chunked = Buffer.from(
      'HTTP/1.1 100 Continue\r\n\r\n' +
        'HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n',
    );
    expect(parseResponse(chunked, 'POST', false)).toMatchObject({ status: 400, text: 'abcde' });
    expect(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n'), 'HEAD', false)).toMatchObject({
      text: '',
    });
  });
});
