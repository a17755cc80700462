import { BasicStrategy } from 'passport-http';
import { basicCredentials } from '../src/oauth/client-authentication';

/**
 * The Basic header is read without passport (issue #28: its per-request strategy objects were a share of
 * /introspect's profile), the way passport-http's Basic strategy read it before, then form-decoded
 * (RFC 6749 §2.3.1): every header below must give what the strategy gave.
 */
function viaPassport(header: string): { clientId: string; secret: string } | null {
  let result: { clientId: string; secret: string } | null = null;
  const strategy = new BasicStrategy((id: string, secret: string, done: (err: unknown, user?: unknown) => void) =>
    done(null, { id, secret }),
  );
  const s = strategy as unknown as {
    success(user: { id: string; secret: string }): void;
    fail(): void;
    error(err: unknown): void;
    authenticate(req: unknown): void;
  };
  s.success = (user) => {
    const decode = (v: string) => {
      try {
        return decodeURIComponent(v.replace(/\+/g, ' '));
      } catch {
        return v;
      }
    };
    result = { clientId: decode(user.id), secret: decode(user.secret) };
  };
  s.fail = () => (result = null);
  s.error = (err) => {
    throw err;
  };
  s.authenticate({ headers: { authorization: header } });
  return result;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

test.each([
  ['Basic ' + b64('app_1:sk_2'), { clientId: 'app_1', secret: 'sk_2' }],
  ['basic ' + b64('app_1:sk_2'), { clientId: 'app_1', secret: 'sk_2' }],
  ['Basic ' + b64('app%201:s+k%3A2'), { clientId: 'app 1', secret: 's k:2' }],
  ['Basic ' + b64('app_1:a:b'), { clientId: 'app_1', secret: 'a' }],
  ['Basic ' + b64('app_1:%zz'), { clientId: 'app_1', secret: '%zz' }],
  ['Basic ' + b64('app_1:'), null],
  ['Basic ' + b64(':sk_2'), null],
  ['Basic ' + b64('no-colon'), null],
  ['Basic', null],
  ['Basic  ' + b64('app_1:sk_2'), null],
  ['Basic ' + b64('app_1:sk_2') + ' extra', { clientId: 'app_1', secret: 'sk_2' }],
  ['Basic !!!', null],
])('%s reads as passport-http read it', (header, expected) => {
  expect(basicCredentials(header)).toEqual(expected);
  expect(viaPassport(header)).toEqual(expected);
});
