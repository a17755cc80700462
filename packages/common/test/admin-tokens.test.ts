import express from 'express';
import request from 'supertest';
import {
  adminTokenHash,
  commonEnv,
  ConfigError,
  errorHandler,
  loadEnv,
  operatorName,
  parseAdminTokens,
  requireAdminToken,
} from '../src';
import { testLogger } from './support';

describe('ADMIN_TOKENS', () => {
  it('parses name:token pairs', () => {
    expect(parseAdminTokens('alice:aaaaaaaaaaaaaaaaaaaaaaaaaa, ci-bot:bbbbbbbbbbbbbbbbbbbbbbbb:cc')).toEqual([
      { name: 'alice', token: 'aaaaaaaaaaaaaaaaaaaaaaaaaa' },
      { name: 'ci-bot', token: 'bbbbbbbbbbbbbbbbbbbbbbbb:cc' },
    ]);
    expect(parseAdminTokens(undefined)).toEqual([]);
  });

  it.each([
    ['alice', /each entry must be name:token/],
    ['Alice:aaaaaaaaaaaaaaaaaaaaaaaaaa', /the name must be 1-64 characters/],
    ['alice:short', /the token of alice must be at least 24 characters/],
    ['a:aaaaaaaaaaaaaaaaaaaaaaaaaa,a:bbbbbbbbbbbbbbbbbbbbbbbbbb', /the name a is given twice/],
  ])('refuses %s at start, naming the variable', (value, message) => {
    let err: unknown;
    try {
      loadEnv(commonEnv, { ADMIN_TOKENS: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/ADMIN_TOKENS: /);
    expect((err as ConfigError).message).toMatch(message);
  });

  it('AUDIT_RETENTION_DAYS defaults to 365 and must be a positive whole number', () => {
    expect(loadEnv<{ AUDIT_RETENTION_DAYS: number }>(commonEnv, {}).AUDIT_RETENTION_DAYS).toBe(365);
    expect(() => loadEnv(commonEnv, { AUDIT_RETENTION_DAYS: '0' })).toThrow(/AUDIT_RETENTION_DAYS/);
  });
});

describe('requireAdminToken', () => {
  const stored = {
    nameOf: async (hash: string) => (hash === adminTokenHash(`adm_${'s'.repeat(43)}`) ? 'stored-op' : null),
  };
  const app = express();
  app.use(
    requireAdminToken({
      adminToken: 'the-admin-token-0123456789',
      adminTokens: 'alice:alice-token-0123456789abcdef',
      stored,
    }),
  );
  app.get('/who', (_req, res) => void res.json({ operator: operatorName(res) }));
  app.use(errorHandler(testLogger));

  it.each([
    ['the-admin-token-0123456789', 'admin'],
    ['alice-token-0123456789abcdef', 'alice'],
    [`adm_${'s'.repeat(43)}`, 'stored-op'],
  ])('names the operator of %s', async (token, operator) => {
    const res = await request(app).get('/who').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ operator });
  });

  it.each([['alice-token-0123456789abcdeX'], [`adm_${'t'.repeat(43)}`], ['']])('refuses %p with 401', async (token) => {
    const res = await request(app).get('/who').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'unauthenticated' });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="admin"/);
  });
});
