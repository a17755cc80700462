import { AppError, errorBody } from '../src';

/** withExtra and withHeaders: the same error with more, as the error handler and the logs read it. */
describe('AppError copies (withExtra, withHeaders)', () => {
  const cause = new Error('the store refused');
  // a 5xx, which keeps its stack trace (a 4xx has none to keep; see the last test)
  const original = new AppError('invalid_grant', 503, 'The code is used.', 'code', {
    headers: { 'WWW-Authenticate': 'Basic' },
    extra: { first: 'one' },
    cause,
  });

  it('keeps the code, status, detail, attribute, message, cause and stack, and adds the fields', () => {
    const copy = original.withExtra({ error: 'invalid_grant', error_description: 'The code is used.' });
    expect(copy).toBeInstanceOf(AppError);
    expect(copy).toBeInstanceOf(Error);
    expect(copy).not.toBe(original);
    expect(copy.name).toBe('AppError');
    expect(copy.message).toBe('The code is used.');
    expect(copy.cause).toBe(cause);
    expect(copy.stack).toBe(original.stack);
    expect(copy.stack).toContain('app-error.test.ts');
    expect(copy.headers).toEqual({ 'WWW-Authenticate': 'Basic' });
    expect(errorBody(copy)).toEqual({
      first: 'one',
      error: 'invalid_grant',
      error_description: 'The code is used.',
      code: 'invalid_grant',
      detail: 'The code is used.',
      attribute: 'code',
    });
    // the original is unchanged
    expect(errorBody(original)).toEqual({
      first: 'one',
      code: 'invalid_grant',
      detail: 'The code is used.',
      attribute: 'code',
    });
  });

  it('withHeaders adds headers and keeps the fields; copies of copies add up', () => {
    const copy = original.withHeaders({ 'Retry-After': '3' }).withExtra({ error: 'slow_down' });
    expect(copy.headers).toEqual({ 'WWW-Authenticate': 'Basic', 'Retry-After': '3' });
    expect(original.headers).toEqual({ 'WWW-Authenticate': 'Basic' });
    expect(copy.extra).toEqual({ first: 'one', error: 'slow_down' });
    expect(copy.status).toBe(503);
    expect(copy.stack).toBe(original.stack);
  });

  it('a stack set on the copy is its own', () => {
    const copy = original.withExtra({});
    copy.stack = 'replaced';
    expect(copy.stack).toBe('replaced');
    expect(original.stack).not.toBe('replaced');
  });

  it('a client error (4xx) is made without a stack trace; a server error (5xx) with one', () => {
    const made = () => [
      new AppError('authorization_pending', 400, 'Not yet.'),
      new AppError('unavailable', 503, 'Down.'),
    ];
    const [client, server] = made();
    expect(client.stack).not.toContain('app-error.test.ts');
    expect(client.message).toBe('Not yet.');
    expect(client).toBeInstanceOf(Error);
    expect(server.stack).toContain('app-error.test.ts');
    // the limit of every other error is as it was
    expect(new Error('other').stack).toContain('app-error.test.ts');
  });
});
