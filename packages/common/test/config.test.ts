import Joi from 'joi';
import {
  commonEnv,
  ConfigError,
  failureLimitEnv,
  loadEnv,
  port,
  publicUrl,
  trustProxySetting,
  type CommonConfig,
} from '../src';

const schema = {
  ...commonEnv,
  IDENTITY_PORT: port(4000),
  BASE_URL: publicUrl('http://localhost:4000'),
  CODE_TTL_SECONDS: Joi.number().integer().default(60),
};

describe('config', () => {
  it('applies defaults and converts types', () => {
    const config = loadEnv<{ IDENTITY_PORT: number; BASE_URL: string; DATA_DIR: string }>(schema, {
      BASE_URL: 'https://id.example.com/',
    });
    expect(config).toMatchObject({ IDENTITY_PORT: 4000, BASE_URL: 'https://id.example.com', DATA_DIR: '.data' });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('names every bad variable in one message', () => {
    let error: unknown;
    try {
      loadEnv(schema, { IDENTITY_PORT: 'abc', DATABASE_URL: 'nonsense', REDIS_URL: 'http://x' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toMatch(/^Invalid environment: /);
    expect(message).toContain('IDENTITY_PORT must be a port number (got abc)');
    expect(message).toContain('DATABASE_URL must be a postgres:// URL');
    expect(message).toContain('REDIS_URL must be a redis:// URL');
  });

  it('treats empty variables as unset', () => {
    expect(loadEnv<{ IDENTITY_PORT: number }>(schema, { IDENTITY_PORT: '' }).IDENTITY_PORT).toBe(4000);
  });

  it('DATABASE_POOL_SIZE: 10 unless set, a whole number from 1 to 1000', () => {
    const load = (env: Record<string, string>) => loadEnv<CommonConfig>(commonEnv, env).DATABASE_POOL_SIZE;
    expect(load({})).toBe(10);
    expect(load({ DATABASE_POOL_SIZE: '25' })).toBe(25);
    for (const bad of ['0', '1001', '2.5', 'ten'])
      expect(() => load({ DATABASE_POOL_SIZE: bad })).toThrow(
        `Invalid environment: DATABASE_POOL_SIZE must be a whole number from 1 to 1000 (got ${bad})`,
      );
  });
});

describe('TRUST_PROXY', () => {
  const load = (value: string) => loadEnv<{ TRUST_PROXY: string }>(commonEnv, { TRUST_PROXY: value }).TRUST_PROXY;
  const problem = (value: string) => {
    try {
      load(value);
      return null;
    } catch (err) {
      return (err as ConfigError).message;
    }
  };

  it('accepts true, false, a hop count, and lists of addresses, CIDRs and names', () => {
    expect(trustProxySetting(load('false'))).toBe(false);
    expect(trustProxySetting(load('true'))).toBe(true);
    expect(trustProxySetting(load('1'))).toBe(1);
    expect(trustProxySetting(load('loopback, 10.0.0.0/8'))).toEqual(['loopback', '10.0.0.0/8']);
    expect(trustProxySetting(load('uniquelocal,192.0.2.7,2001:db8::/32,::1'))).toEqual([
      'uniquelocal',
      '192.0.2.7',
      '2001:db8::/32',
      '::1',
    ]);
  });

  const bad = ['banana', '10.0.0.0/33', '2001:db8::/129', '10.0.0.0/8,', 'loopback 10.0.0.0/8', '300.1.1.1'];
  it.each(bad)('refuses %s with a message naming TRUST_PROXY', (value) => {
    expect(problem(value)).toBe(
      'Invalid environment: TRUST_PROXY must be true, false, a hop count, or a comma-separated list of proxy ' +
        `addresses, CIDRs or the names loopback, linklocal, uniquelocal (got '${value}')`,
    );
  });

  it('express gets exactly the validated list', () => {
    expect(() => trustProxySetting('10.0.0.0/33')).toThrow(ConfigError);
  });
});

describe('failure limits', () => {
  it('defaults to 10 per id and address, 100 per id, 200 per address, in 15 minutes', () => {
    expect(loadEnv(failureLimitEnv, {})).toEqual({
      AUTH_FAILURE_WINDOW_SECONDS: 900,
      AUTH_FAILURES_PER_ID_AND_ADDRESS: 10,
      AUTH_FAILURES_PER_ID: 100,
      AUTH_FAILURES_PER_ADDRESS: 200,
    });
  });

  it('names a bad limit', () => {
    expect(() => loadEnv(failureLimitEnv, { AUTH_FAILURES_PER_ID: '0', AUTH_FAILURE_WINDOW_SECONDS: 'soon' })).toThrow(
      'Invalid environment: AUTH_FAILURE_WINDOW_SECONDS must be a number; ' +
        'AUTH_FAILURES_PER_ID must be greater than or equal to 1',
    );
  });
});
