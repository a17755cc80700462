import Joi from 'joi';
import { commonEnv, ConfigError, loadEnv, port, publicUrl } from '../src';

const schema = { ...commonEnv, IDENTITY_PORT: port(4000), BASE_URL: publicUrl('http://localhost:4000'), CODE_TTL_SECONDS: Joi.number().integer().default(60) };

describe('config', () => {
  it('applies defaults and converts types', () => {
    const config = loadEnv<{ IDENTITY_PORT: number; BASE_URL: string; DATA_DIR: string }>(schema, { BASE_URL: 'https://id.example.com/' });
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
});
