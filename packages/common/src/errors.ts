/** The one error type every service throws; the error handler turns it into `{code, detail, attribute}`. */
export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly detail: string;
  readonly attribute: string | null;
  readonly headers: Record<string, string>;
  /** Extra body fields, e.g. the OAuth `error` pair on /token. */
  readonly extra: Record<string, string>;

  constructor(
    code: string,
    status: number,
    detail: string,
    attribute: string | null = null,
    options: { headers?: Record<string, string>; extra?: Record<string, string>; cause?: unknown } = {},
  ) {
    // An answer to a client (4xx) is not a fault, and nothing reads where it was made: no stack trace is
    // captured for it. V8's capture was most of the cost of an error answer, and a CIBA or device grant's
    // poll is answered authorization_pending on every poll until the person acts. A 5xx keeps its trace
    // for the error log (error-handler.ts).
    const traceLimit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    super(detail, { cause: options.cause });
    Error.stackTraceLimit = traceLimit;
    this.name = 'AppError';
    this.code = code;
    this.status = status;
    this.detail = detail;
    this.attribute = attribute;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }

  withHeaders(headers: Record<string, string>): AppError {
    return this.copy({ ...this.headers, ...headers }, this.extra);
  }

  withExtra(extra: Record<string, string>): AppError {
    return this.copy(this.headers, { ...this.extra, ...extra });
  }

  /**
   * The same error with other headers or body fields. Not a new Error: capturing a stack trace was the
   * cost of an error answer that /token renames for OAuth (a CIBA or device poll's authorization_pending
   * is one on every poll). The copy's message, cause and stack are the original's (read when asked).
   */
  private copy(headers: Record<string, string>, extra: Record<string, string>): AppError {
    const copy = Object.create(AppError.prototype) as AppError;
    Object.assign(copy, { name: this.name, code: this.code, status: this.status, detail: this.detail });
    Object.assign(copy, { attribute: this.attribute, headers, extra });
    Object.defineProperties(copy, {
      message: { value: this.message, writable: true, configurable: true },
      stack: {
        get: () => this.stack,
        set(value: string) {
          Object.defineProperty(copy, 'stack', { value, writable: true, configurable: true });
        },
        configurable: true,
      },
      ...('cause' in this ? { cause: { value: this.cause, writable: true, configurable: true } } : {}),
    });
    return copy;
  }
}

export interface ErrorBody {
  code: string;
  detail: string;
  attribute: string | null;
  [extra: string]: string | null;
}

export function errorBody(err: AppError): ErrorBody {
  return { ...err.extra, code: err.code, detail: err.detail, attribute: err.attribute };
}

export const errors = {
  notFound: (detail = 'The requested resource was not found.', attribute: string | null = null) =>
    new AppError('not_found', 404, detail, attribute),
  methodNotAllowed: (method: string, allow: string[]) =>
    new AppError('method_not_allowed', 405, `HTTP method '${method}' is not allowed for this endpoint.`, null, {
      headers: { Allow: allow.join(', ') },
    }),
  required: (attribute: string) => new AppError('required', 400, 'This attribute is required.', attribute),
  invalidParameter: (attribute: string, detail: string) => new AppError('invalid_parameter', 400, detail, attribute),
  invalidBody: (detail: string) => new AppError('invalid_body', 400, detail),
  payloadTooLarge: (detail = 'The request body is too large.') => new AppError('payload_too_large', 413, detail),
  unsupportedEncoding: (encoding: string) =>
    new AppError(
      'unsupported_encoding',
      415,
      `Content-Encoding '${encoding}' is not supported; send the body uncompressed, or as gzip, deflate or br.`,
    ),
  unsupportedCharset: (charset: string) =>
    new AppError('unsupported_charset', 415, `The charset '${charset}' is not supported; send the body as UTF-8.`),
  unauthenticated: (detail: string, scheme: string) =>
    new AppError('unauthenticated', 401, detail, null, { headers: { 'WWW-Authenticate': scheme } }),
  conflict: (code: string, detail: string, attribute: string | null = null) =>
    new AppError(code, 409, detail, attribute),
  unavailable: (what: string, cause?: unknown) =>
    new AppError('service_unavailable', 503, `The ${what} is temporarily unavailable; try again shortly.`, null, {
      headers: { 'Retry-After': '5' },
      cause,
    }),
  /** 429 after too many failed attempts; `headers` carry the RateLimit fields. */
  tooManyRequests: (retryAfterSeconds: number, headers: Record<string, string> = {}) =>
    new AppError(
      'too_many_requests',
      429,
      `Too many failed attempts; try again in ${retryAfterSeconds} seconds.`,
      null,
      { headers: { 'Retry-After': String(retryAfterSeconds), ...headers } },
    ),
  internal: () => new AppError('internal_error', 500, 'An unexpected error occurred.'),
};

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
