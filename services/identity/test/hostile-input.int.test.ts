import { gzipSync } from 'node:zlib';
import { answeredRequest, listen, type Listening, type RawRequest, type RawResponse } from '@attest/testing';
import { basic, createApp, identityHarness, type IdentityHarness } from './support';

const FORM = 'application/x-www-form-urlencoded';

/** Issue #9: bad input is answered with a 4xx in the error shape (an HTML page on the pages), never a hang or a 500. */
describe('identity: hostile input', () => {
  let h: IdentityHarness;
  let server: Listening;
  let app: { app_id: string; client_secret: string };
  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
    server = await listen(h.publicApp);
  });
  afterAll(async () => {
    await server.close();
    await h.close();
  });

  const send = (req: RawRequest) => answeredRequest(server.port, req);
  const json = (res: RawResponse) => {
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    return JSON.parse(res.text) as Record<string, unknown>;
  };
  const pageErrorCode = (res: RawResponse) => /<code id="error-code">([^<]*)<\/code>/.exec(res.text)?.[1];
  const pageErrorAttribute = (res: RawResponse) => /<code id="error-attribute">([^<]*)<\/code>/.exec(res.text)?.[1];

  describe('client_id given twice with valid Basic credentials', () => {
    const body = () => `grant_type=authorization_code&code=abc&client_id=${app.app_id}&client_id=${app.app_id}&token=x`;

    it('POST /token answers 400 invalid_request naming client_id, with the OAuth pair', async () => {
      const res = await send({
        method: 'POST',
        target: '/token',
        headers: [
          ['Content-Type', FORM],
          ['Authorization', basic(app.app_id, app.client_secret)],
        ],
        body: body(),
      });
      expect(res.status).toBe(400);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(json(res)).toEqual({
        code: 'invalid_request',
        detail: 'The client_id parameter must be given once.',
        attribute: 'client_id',
        error: 'invalid_request',
        error_description: 'The client_id parameter must be given once.',
      });
    });

    it('POST /introspect answers 400 invalid_request naming client_id', async () => {
      const res = await send({
        method: 'POST',
        target: '/introspect',
        headers: [
          ['Content-Type', FORM],
          ['Authorization', basic(app.app_id, app.client_secret)],
        ],
        body: body(),
      });
      expect(res.status).toBe(400);
      expect(json(res)).toEqual({
        code: 'invalid_request',
        detail: 'The client_id parameter must be given once.',
        attribute: 'client_id',
      });
    });

    it('is refused the same way with wrong Basic credentials, before they are checked', async () => {
      const res = await send({
        method: 'POST',
        target: '/token',
        headers: [
          ['Content-Type', FORM],
          ['Authorization', basic(app.app_id, 'sk_wrong')],
        ],
        body: body(),
      });
      expect(res.status).toBe(400);
      expect(json(res)).toMatchObject({ code: 'invalid_request', attribute: 'client_id', error: 'invalid_request' });
    });
  });

  describe('pages posted without a form content type', () => {
    it.each(['/signin', '/consent'])(
      'POST %s with no body answers the 400 HTML error page invalid_content_type',
      async (path) => {
        const res = await send({ method: 'POST', target: path });
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(pageErrorCode(res)).toBe('invalid_content_type');
        expect(res.text).toContain('Only application/x-www-form-urlencoded is supported.');
      },
    );

    it('POST /signin with a JSON body answers the same page', async () => {
      const res = await send({
        method: 'POST',
        target: '/signin',
        headers: [['Content-Type', 'application/json']],
        body: '{"interaction":"x"}',
      });
      expect(res.status).toBe(400);
      expect(pageErrorCode(res)).toBe('invalid_content_type');
    });
  });

  describe('a form with more than 100 fields', () => {
    const fields = Array.from({ length: 101 }, (_, i) => `p${i + 1}=1`).join('&');

    it('POST /token answers 413 payload_too_large saying how many fields are allowed, with the OAuth pair', async () => {
      const res = await send({ method: 'POST', target: '/token', headers: [['Content-Type', FORM]], body: fields });
      expect(res.status).toBe(413);
      const detail = 'The form has more than 100 fields; send at most 100.';
      expect(json(res)).toEqual({
        code: 'payload_too_large',
        detail,
        attribute: null,
        error: 'invalid_request',
        error_description: detail,
      });
    });

    it('POST /signin answers the 413 HTML error page', async () => {
      const res = await send({ method: 'POST', target: '/signin', headers: [['Content-Type', FORM]], body: fields });
      expect(res.status).toBe(413);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(pageErrorCode(res)).toBe('payload_too_large');
    });

    it('POST /authorize answers the 413 error page, or JSON when asked', async () => {
      const page = await send({
        method: 'POST',
        target: '/authorize',
        headers: [['Content-Type', FORM]],
        body: fields,
      });
      expect(page.status).toBe(413);
      expect(pageErrorCode(page)).toBe('payload_too_large');
      const asJson = await send({
        method: 'POST',
        target: '/authorize',
        headers: [
          ['Content-Type', FORM],
          ['Accept', 'application/json'],
        ],
        body: fields,
      });
      expect(asJson.status).toBe(413);
      expect(json(asJson)).toMatchObject({ code: 'payload_too_large', attribute: null });
    });
  });

  describe('Content-Encoding that does not match the body', () => {
    it('POST /token with gzip that is not gzip answers 400 invalid_body naming the encoding, with the OAuth pair', async () => {
      const res = await send({
        method: 'POST',
        target: '/token',
        headers: [
          ['Content-Type', FORM],
          ['Content-Encoding', 'gzip'],
        ],
        body: 'grant_type=authorization_code',
      });
      expect(res.status).toBe(400);
      const detail =
        "The request body is not valid 'gzip' data, as its Content-Encoding says; send it uncompressed or compress it correctly.";
      expect(json(res)).toEqual({
        code: 'invalid_body',
        detail,
        attribute: null,
        error: 'invalid_request',
        error_description: detail,
      });
    });

    it('POST /consent with gzip that is not gzip answers the 400 HTML error page', async () => {
      const res = await send({
        method: 'POST',
        target: '/consent',
        headers: [
          ['Content-Type', FORM],
          ['Content-Encoding', 'gzip'],
        ],
        body: 'decision=approve',
      });
      expect(res.status).toBe(400);
      expect(pageErrorCode(res)).toBe('invalid_body');
    });

    it('POST /token with an unknown Content-Encoding answers 415 unsupported_encoding', async () => {
      const res = await send({
        method: 'POST',
        target: '/token',
        headers: [
          ['Content-Type', FORM],
          ['Content-Encoding', 'snappy'],
        ],
        body: 'grant_type=authorization_code',
      });
      expect(res.status).toBe(415);
      expect(json(res)).toMatchObject({ code: 'unsupported_encoding', attribute: null, error: 'invalid_request' });
      expect(json(res).detail).toBe(
        "Content-Encoding 'snappy' is not supported; send the body uncompressed, or as gzip, deflate or br.",
      );
    });

    it('POST /token with an unsupported charset answers 415 unsupported_charset', async () => {
      const res = await send({
        method: 'POST',
        target: '/token',
        headers: [['Content-Type', `${FORM}; charset=latin1`]],
        body: 'grant_type=authorization_code',
      });
      expect(res.status).toBe(415);
      expect(json(res)).toMatchObject({
        code: 'unsupported_charset',
        detail: "The charset 'LATIN1' is not supported; send the body as UTF-8.",
        error: 'invalid_request',
      });
    });

    it('still reads a real gzip form (the credentials in it are checked)', async () => {
      const body = gzipSync(
        `grant_type=authorization_code&client_id=${app.app_id}&client_secret=sk_wrong&code=x&redirect_uri=x`,
      );
      const res = await send({
        method: 'POST',
        target: '/token',
        headers: [
          ['Content-Type', FORM],
          ['Content-Encoding', 'gzip'],
        ],
        body,
      });
      expect(res.status).toBe(401);
      expect(json(res)).toMatchObject({ code: 'unauthenticated', error: 'invalid_client' });
    });
  });

  describe('malformed percent-encoding', () => {
    it('GET /signin?interaction=%zz answers the expired-request page, not a 500', async () => {
      const res = await send({ method: 'GET', target: '/signin?interaction=%zz' });
      expect(res.status).toBe(400);
      expect(pageErrorCode(res)).toBe('invalid_request');
      expect(pageErrorAttribute(res)).toBe('interaction');
    });

    it('a form field with malformed percent-encoding is read, not a 500', async () => {
      const res = await send({
        method: 'POST',
        target: '/token',
        headers: [
          ['Content-Type', FORM],
          ['Authorization', basic(app.app_id, app.client_secret)],
        ],
        body: 'grant_type=%zz&code=%ff%fe',
      });
      expect(res.status).toBe(400);
      expect(json(res)).toMatchObject({
        code: 'invalid_grant_type',
        attribute: 'grant_type',
        error: 'unsupported_grant_type',
      });
    });
  });
});
