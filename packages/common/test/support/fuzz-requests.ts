import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { RawRequest } from './raw-http';
import type { FuzzEndpoint, FuzzSurface } from './fuzz-surface';

/** The fuzzer's requests: mostly plausible for one endpoint of the surface, each with hostile parts. */

const MALFORMED_ESCAPES = [
  '%zz',
  '%',
  '%ff%fe',
  '%c0%ae',
  '%E0%A4%A',
  '%u0041',
  '%00',
  '%2F',
  '%25',
  '%%',
  '%e2%82',
  '%ed%a0%80',
];

const percentBytes = (bytes: Uint8Array) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
const printable = (maxLength: number) => fc.string({ unit: 'grapheme-ascii', maxLength });
const token = fc.stringMatching(/^[A-Za-z0-9!#$&'*+.^_`|~-]{1,20}$/);

/** A path segment or a field value: good, malformed, raw bytes, unicode, long. */
function valueArbitrary(good: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...good) },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_ESCAPES) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 24 }).map(percentBytes) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }).map(encodeURIComponent) },
    { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9._~!$'()*,;:@+=-]{0,24}$/) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(...good), fc.constantFrom(...MALFORMED_ESCAPES)).map(([a, b]) => a + b),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 3000 }).map((n) => 'x'.repeat(n)) },
    { weight: 1, arbitrary: fc.constantFrom('', '..', '.', '%2e%2e', 'null', '[]', '{}', '0x', '-1', '1e309') },
  );
}

function pathArbitrary(surface: FuzzSurface, endpoint: FuzzEndpoint): fc.Arbitrary<string> {
  const segment = valueArbitrary(surface.values);
  const good = endpoint.values?.length ? fc.constantFrom(...endpoint.values) : segment;
  const endpointPath = fc.oneof(good, segment).map((value) => endpoint.path.replace('{}', value));
  const suffixes = ['/', '//', '/x', '/..', '.json', '%2F', ';a=b', '%00'];
  const mutated = fc.tuple(endpointPath, fc.constantFrom(...suffixes)).map(([p, s]) => p + s);
  const shouting = endpointPath.map((p) => p.toUpperCase());
  const random = fc.array(segment, { minLength: 0, maxLength: 5 }).map((segments) => `/${segments.join('/')}`);
  return fc.oneof({ weight: 12, arbitrary: endpointPath }, { weight: 2, arbitrary: mutated }, shouting, random);
}

function pairsArbitrary(surface: FuzzSurface, maxLength: number, endpoint?: FuzzEndpoint): fc.Arbitrary<string> {
  const names = endpoint?.names?.length ? endpoint.names : surface.names;
  const name = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...names) },
    { weight: 2, arbitrary: fc.constantFrom(...surface.names) },
    fc.constantFrom(...surface.names).map((n) => `${n}[]`),
    fc.constantFrom(...surface.names).map((n) => `${n}[a][b]`),
    valueArbitrary(['a', '__proto__', 'constructor', 'hasOwnProperty']),
  );
  const pair = fc.oneof(
    { weight: 8, arbitrary: fc.tuple(name, valueArbitrary(surface.values)).map(([n, v]) => `${n}=${v}`) },
    name,
    fc.constantFrom('=', '&', '==', '%=%', '=%'),
  );
  // the same name twice, as in `client_id=a&client_id=a`
  const twice = fc
    .tuple(fc.constantFrom(...names), valueArbitrary(surface.values))
    .map(([n, v]) => `${n}=${v}&${n}=${v}`);
  const item = fc.oneof({ weight: 6, arbitrary: pair }, twice);
  return fc.array(item, { maxLength }).map((pairs) => pairs.join('&'));
}

/** Optionally one of the endpoint's well-formed field sets, then hostile fields. */
function fieldsArbitrary(surface: FuzzSurface, endpoint: FuzzEndpoint, maxLength: number): fc.Arbitrary<string> {
  const base = endpoint.base?.length ? fc.option(fc.constantFrom(...endpoint.base), { nil: '' }) : fc.constant('');
  return fc
    .tuple(base, pairsArbitrary(surface, maxLength, endpoint))
    .map(([good, hostile]) => [good, hostile].filter(Boolean).join('&'));
}

function queryArbitrary(surface: FuzzSurface, endpoint: FuzzEndpoint): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fieldsArbitrary(surface, endpoint, 8).map((q) => (q ? `?${q}` : '')) },
    fc.constant('?'),
  );
}

const CONTENT_TYPES = [
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=UTF-8',
  'application/x-www-form-urlencoded; charset=iso-8859-1',
  'application/x-www-form-urlencoded; charset=latin1',
  'application/x-www-form-urlencoded; charset=utf-16',
  'application/x-www-form-urlencoded; charset="nonsense"',
  'application/x-www-form-urlencoded;;;',
  'application/json',
  'application/json; charset=utf-32',
  'application/json; charset=koi8-r',
  'application/merge-patch+json',
  'text/plain',
  'text/html',
  'multipart/form-data; boundary=xyz',
  'application/octet-stream',
  '*/*',
  'form',
  '',
];
const ENCODINGS = [
  'gzip',
  'deflate',
  'br',
  'identity',
  'x-gzip',
  'compress',
  'zstd',
  'gzip, gzip',
  'GZIP',
  'chunked',
  '',
];
const ACCEPTS = ['application/json', 'text/html', '*/*', 'text/html;q=0, application/json', 'image/png', ''];

function hostileHeaders(surface: FuzzSurface): fc.Arbitrary<[string, string][]> {
  const contentType = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) }, printable(40));
  const encoding = fc.oneof(fc.constantFrom(...ENCODINGS), token);
  const base64 = fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString('base64'));
  const authorization = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(...surface.headers.filter(([n]) => n === 'Authorization').map(([, v]) => v), 'Basic'),
    },
    base64.map((b) => `Basic ${b}`),
    fc.tuple(printable(30), printable(30)).map(([u, p]) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`),
    printable(60).map((t) => `Bearer ${t}`),
    fc.constantFrom('Bearer', 'Bearer ', 'Basic ', 'Digest x', 'basic   ', 'Bearer a b'),
    printable(80),
  );
  const cookie = fc.oneof(
    fc.constantFrom(...surface.headers.filter(([n]) => n === 'Cookie').map(([, v]) => v), 'attest_session=x'),
    printable(80),
    fc.uint8Array({ maxLength: 30 }).map((b) => `attest_csrf=${percentBytes(b)}`),
  );
  const one = fc.oneof(
    { weight: 4, arbitrary: contentType.map((v): [string, string] => ['Content-Type', v]) },
    { weight: 2, arbitrary: encoding.map((v): [string, string] => ['Content-Encoding', v]) },
    { weight: 4, arbitrary: authorization.map((v): [string, string] => ['Authorization', v]) },
    { weight: 2, arbitrary: fc.constantFrom(...ACCEPTS).map((v): [string, string] => ['Accept', v]) },
    { weight: 2, arbitrary: cookie.map((v): [string, string] => ['Cookie', v]) },
    fc.constantFrom(...surface.headers),
    printable(40).map((v): [string, string] => ['If-None-Match', v]),
    printable(40).map((v): [string, string] => ['If-Modified-Since', v]),
    printable(200).map((v): [string, string] => ['X-Request-Id', v]),
    printable(60).map((v): [string, string] => ['Origin', v]),
    fc.constant<[string, string]>(['Expect', '100-continue']),
    fc.tuple(token, printable(60)).map(([n, v]): [string, string] => [`X-${n}`, v]),
  );
  return fc.array(one, { maxLength: 5 });
}

const GZIP_BOMB = gzipSync(Buffer.alloc(4 * 1024 * 1024));

function bodyArbitrary(surface: FuzzSurface): fc.Arbitrary<Buffer> {
  const form = pairsArbitrary(surface, 16).map((s) => Buffer.from(s));
  const plain = fc.oneof(
    { weight: 6, arbitrary: form },
    { weight: 2, arbitrary: fc.json({ maxDepth: 4 }).map((s) => Buffer.from(s)) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)) },
    fc
      .integer({ min: 101, max: 400 })
      .map((n) => Buffer.from(Array.from({ length: n }, (_, i) => `p${i}=1`).join('&'))),
    fc.integer({ min: 90 * 1024, max: 300 * 1024 }).map((n) => Buffer.alloc(n, 'a=b&')),
    fc.integer({ min: 500, max: 20000 }).map((n) => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`)),
    fc.integer({ min: 500, max: 5000 }).map((n) => Buffer.from(`${'{"a":'.repeat(n)}1${'}'.repeat(n)}`)),
    fc.integer({ min: 50, max: 2000 }).map((n) => Buffer.from(`a${'[b]'.repeat(n)}=1`)),
  );
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(Buffer.alloc(0)) },
    { weight: 8, arbitrary: plain },
    { weight: 2, arbitrary: plain.map((b) => gzipSync(b)) },
    fc.constant(GZIP_BOMB),
  );
}

const METHODS = ['GET', 'POST', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'PROPFIND', 'SEARCH'];
const FORM = 'application/x-www-form-urlencoded';
/** Node answers a request line and headers over 16 kB itself (431), before the app: keep the target below. */
const MAX_TARGET = 8192;

/** Mostly plausible requests to one endpoint (its methods, content type, credentials), each with hostile parts. */
function endpointRequest(surface: FuzzSurface, endpoint: FuzzEndpoint): fc.Arbitrary<RawRequest> {
  const option = <T>(arbitrary: fc.Arbitrary<T>, freq: number) => fc.option(arbitrary, { freq, nil: undefined });
  const form = fieldsArbitrary(surface, endpoint, 12).map((s) => Buffer.from(s));
  const credentials = endpoint.headers?.length ? endpoint.headers : surface.headers;
  return fc
    .record({
      method: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...endpoint.methods) }, fc.constantFrom(...METHODS)),
      path: pathArbitrary(surface, endpoint),
      query: queryArbitrary(surface, endpoint),
      contentType: option(fc.constantFrom(FORM, `${FORM}; charset=UTF-8`), endpoint.form ? 4 : 2),
      credentials: option(fc.constantFrom(...credentials), 2),
      headers: hostileHeaders(surface),
      body: endpoint.form ? fc.oneof(form, bodyArbitrary(surface)) : bodyArbitrary(surface),
      chunked: fc.boolean(),
    })
    .map(({ method, path, query, contentType, credentials, headers, body, chunked }) => {
      const plausible: [string, string][] = [];
      if (contentType) plausible.push(['Content-Type', contentType]);
      if (credentials) plausible.push(credentials);
      const target = (path + query).slice(0, MAX_TARGET);
      return { method, target, headers: [...plausible, ...headers], body, chunked };
    });
}

export function requestArbitrary(surface: FuzzSurface): fc.Arbitrary<RawRequest> {
  return fc.oneof(...surface.endpoints.map((endpoint) => endpointRequest(surface, endpoint)));
}
