import type { Request } from 'express';
import { AppError, errors } from '../errors';

/** Most fields a form body may have (body-parser's parameterLimit). */
export const FORM_FIELD_LIMIT = 100;

/** What body-parser, raw-body, zlib and the router attach to the errors they raise. */
interface HttpLikeError {
  name?: string;
  type?: string;
  status?: number;
  limit?: number;
  charset?: string;
  encoding?: string;
}

const clip = (value: string) => (value.length > 40 ? `${value.slice(0, 40)}…` : value);

const contentEncoding = (req?: Request) =>
  clip(
    String(req?.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase(),
  );

function bodyKind(req?: Request): string {
  if (req?.is(['application/json', 'application/*+json'])) return 'JSON';
  if (req?.is('application/x-www-form-urlencoded')) return 'form data (application/x-www-form-urlencoded)';
  return 'in the format its Content-Type names';
}

/** Malformed percent-encoding in a path the router could not decode; `name` is the parameter when known. */
export const malformedPathParameter = (name: string | null) =>
  new AppError(
    'invalid_parameter',
    400,
    `${name ?? 'The URL path'} is not valid percent-encoded UTF-8 (write each byte as %XX, two hexadecimal digits).`,
    name,
  );

const BY_TYPE: Record<string, (err: HttpLikeError, req?: Request) => AppError> = {
  'entity.too.large': (err) =>
    errors.payloadTooLarge(
      err.limit ? `The request body is larger than ${err.limit} bytes; send a smaller one.` : undefined,
    ),
  'parameters.too.many': () =>
    errors.payloadTooLarge(`The form has more than ${FORM_FIELD_LIMIT} fields; send at most ${FORM_FIELD_LIMIT}.`),
  'entity.parse.failed': (_err, req) => errors.invalidBody(`The request body is not valid ${bodyKind(req)}.`),
  'querystring.parse.rangeError': () => errors.invalidBody('The form is nested too deeply; send flat fields.'),
  'charset.unsupported': (err) => errors.unsupportedCharset(clip(String(err.charset ?? '').toUpperCase())),
  'encoding.unsupported': (err, req) => errors.unsupportedEncoding(clip(err.encoding ?? contentEncoding(req))),
  'request.size.invalid': () =>
    errors.invalidBody('The request body does not have the length its Content-Length header says.'),
  'request.aborted': () => errors.invalidBody('The request body ended before all of it arrived.'),
};

/**
 * The client's part of a failure to read a request (body-parser, decompression, path decoding), as an
 * AppError with a sentence the client can act on; null when the error is not one of those.
 */
export function requestError(err: unknown, req?: Request): AppError | null {
  if (typeof err !== 'object' || err === null) return null;
  const http = err as HttpLikeError;
  if (http.name === 'URIError' && http.status === 400) return malformedPathParameter(null);
  const byType = http.type ? BY_TYPE[http.type] : undefined;
  if (byType) return byType(http, req);
  if (typeof http.status !== 'number' || http.status < 400 || http.status >= 500) return null;
  // body-parser passes decompression failures on as a bare 400
  const encoding = contentEncoding(req);
  if (encoding !== 'identity')
    return errors.invalidBody(
      `The request body is not valid '${encoding}' data, as its Content-Encoding says; ` +
        'send it uncompressed or compress it correctly.',
    );
  if (http.status === 413) return errors.payloadTooLarge();
  return errors.invalidBody('The request could not be read; check its headers and body.');
}
