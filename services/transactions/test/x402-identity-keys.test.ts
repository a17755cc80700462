import { generateKeyPairSync, sign, verify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '@attest/common';
import { testLogger } from '@attest/testing';
import { loadTransactionsConfig } from '../src/config';
import { IdentityKeys } from '../src/x402/human-proof';

const policy = { allowHttp: true, allowPrivate: true, allowPrivateSetting: 'X402_IDENTITY_JWKS_URL' };

const rsaJwk = (kid: string) => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } };
};

/**
 * The identity service's keys as the transactions service fetches them for x402's attest-human extension:
 * once, then from memory until the TTL; again for a kid it does not know (a rotation), at most every
 * refreshAfterMs; a set that cannot be fetched leaves the last one serving. The clock is the test's.
 */
describe('x402 attest-human: the identity service’s JWKS, fetched and cached', () => {
  let server: http.Server;
  let url: string;
  let keys: object[] = [];
  let status = 200;
  let fetches = 0;

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      fetches++;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('fetches once, serves from memory, fetches again for an unknown kid (not more often than refreshAfterMs) and after the TTL, and keeps the last set when a fetch fails', async () => {
    const first = rsaJwk('k1');
    const second = rsaJwk('k2');
    // a private part is never taken as a key
    keys = [first.jwk, { ...second.jwk, kid: 'leaked', d: 'private' }];
    status = 200;
    fetches = 0;
    let now = 1_000_000;
    const identity = new IdentityKeys(url, policy, testLogger, {
      ttlMs: 300000,
      refreshAfterMs: 10000,
      now: () => now,
    });

    const key = await identity.key('k1', 'RS256');
    expect(key).not.toBeNull();
    // the key it found verifies what the matching private key signed
    const data = Buffer.from('signing input');
    expect(key!.asymmetricKeyType).toBe('rsa');
    const signature = sign('sha256', data, first.privateKey);
    expect(verify('sha256', data, key!, signature)).toBe(true);
    expect(await identity.key('k1', 'RS256')).not.toBeNull();
    expect(await identity.key('leaked', 'RS256')).toBeNull();
    // another algorithm than the key's is no key
    expect(await identity.key('k1', 'ES256')).toBeNull();
    expect(fetches).toBe(1);

    // identity rotates: k2 published. Within refreshAfterMs an unknown kid fetches nothing
    keys = [first.jwk, second.jwk];
    now += 5000;
    expect(await identity.key('k2', 'RS256')).toBeNull();
    expect(fetches).toBe(1);
    now += 5000;
    expect(await identity.key('k2', 'RS256')).not.toBeNull();
    expect(fetches).toBe(2);

    // many asks at once, after the TTL: one fetch
    now += 300000;
    const found = await Promise.all(Array.from({ length: 5 }, () => identity.key('k1', 'RS256')));
    expect(found.every((k) => k !== null)).toBe(true);
    expect(fetches).toBe(3);

    // identity does not answer: the last set still serves
    status = 500;
    now += 300000;
    expect(await identity.key('k2', 'RS256')).not.toBeNull();
    expect(fetches).toBe(4);
    // nor is it asked again (an unknown kid included) before refreshAfterMs
    now += 5000;
    expect(await identity.key('k2', 'RS256')).not.toBeNull();
    expect(await identity.key('k3', 'RS256')).toBeNull();
    expect(fetches).toBe(4);
  });

  it('a URL the outbound guard refuses is never fetched', async () => {
    fetches = 0;
    const identity = new IdentityKeys(url, { ...policy, allowHttp: false }, testLogger);
    expect(await identity.key('k1', 'RS256')).toBeNull();
    expect(fetches).toBe(0);
  });

  it('while identity has never answered, it is asked at most once every refreshAfterMs', async () => {
    keys = [rsaJwk('k1').jwk];
    status = 503;
    fetches = 0;
    let now = 1_000_000;
    const identity = new IdentityKeys(url, policy, testLogger, { refreshAfterMs: 10000, now: () => now });
    for (let i = 0; i < 5; i++) expect(await identity.key('k1', 'RS256')).toBeNull();
    expect(fetches).toBe(1);
    status = 200;
    now += 10000;
    expect(await identity.key('k1', 'RS256')).not.toBeNull();
    expect(fetches).toBe(2);
  });

  it('the configuration: the JWKS URL defaults to the issuer’s /jwks; plain http only in embedded mode; a JWKS URL needs an issuer', () => {
    const base = { API_KEY_SECRET: 'api-key-test-secret-0123456789abcdef', LOG_LEVEL: 'silent' };
    expect(loadTransactionsConfig(base).x402Identity).toBeNull();
    expect(loadTransactionsConfig({ ...base, X402_IDENTITY_ISSUER: 'http://localhost:4000/' }).x402Identity).toEqual({
      issuer: 'http://localhost:4000',
      jwksUrl: 'http://localhost:4000/jwks',
      policy: { allowHttp: true, allowPrivate: true, allowPrivateSetting: 'X402_IDENTITY_JWKS_URL' },
    });
    const withDatabase = {
      ...base,
      DATABASE_URL: 'postgres://db.internal/attest',
      KEY_ENCRYPTION_KEY: 'key-encryption-test-0123456789abcdef',
      ADMIN_TOKEN: 'admin-token-0123456789abcdef-0123',
    };
    expect(
      loadTransactionsConfig({
        ...withDatabase,
        X402_IDENTITY_ISSUER: 'https://id.example.com',
        X402_IDENTITY_JWKS_URL: 'https://identity.internal/jwks',
      }).x402Identity,
    ).toMatchObject({ issuer: 'https://id.example.com', jwksUrl: 'https://identity.internal/jwks' });
    const problems = (env: NodeJS.ProcessEnv) => {
      try {
        loadTransactionsConfig(env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).message;
      }
      return null;
    };
    expect(problems({ ...withDatabase, X402_IDENTITY_ISSUER: 'http://identity:4000' })).toContain(
      'the identity JWKS URL must be https (plain http only in the embedded development mode) (X402_IDENTITY_JWKS_URL, else X402_IDENTITY_ISSUER + /jwks)',
    );
    expect(problems({ ...base, X402_IDENTITY_JWKS_URL: 'http://localhost:4000/jwks' })).toContain(
      'X402_IDENTITY_JWKS_URL is set without X402_IDENTITY_ISSUER',
    );
    expect(problems({ ...base, X402_IDENTITY_ISSUER: 'ftp://id.example.com' })).toContain(
      'X402_IDENTITY_ISSUER must be an http(s) URL',
    );
  });
});
