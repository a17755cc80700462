import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import type { Cache, Db, InvalidationBus } from '@attest/common';
import {
  harnessDeps,
  serviceHarness,
  testBus,
  testCache,
  testDatabase,
  testLogger,
  testStorage,
  type TestStorage,
} from '@attest/testing';
import { buildApp, buildServices, type IdentityServices, type ServiceOptions } from '../src/app';
import { loadIdentityConfig, type IdentityConfig } from '../src/config';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const BASE_URL = 'http://localhost:4000';
export const REDIRECT_URI = 'http://localhost:3000/callback';

export interface IdentityHarness {
  publicApp: Express;
  adminApp: Express;
  config: IdentityConfig;
  /** The services app.ts built, in their groups (kernel, tokens, oauth, signin, portal, admin). */
  ctx: IdentityServices;
  storage: TestStorage;
  close(): Promise<void>;
}

/**
 * What an instance shares with others: another instance's database (a restart, or a replica), and
 * the cache and bus it should use (e.g. a throwaway Redis); or the servers to use instead of the test
 * servers (`database`, `redis`: a throwaway Postgres, a proxied Redis).
 */
export interface SharedStorage {
  db?: Db;
  cache?: Cache;
  bus?: InvalidationBus;
  database?: string;
  redis?: string;
}

async function harnessStorage(shared: SharedStorage): Promise<TestStorage> {
  const migrations = path.join(__dirname, '..', 'migrations');
  const urls = { database: shared.database, redis: shared.redis };
  if (!shared.db && !shared.cache && !shared.bus) return testStorage('identity', migrations, urls);
  const redis = shared.redis ?? process.env.TEST_REDIS_URL;
  const db =
    shared.db ?? (await testDatabase('identity', migrations, shared.database ?? process.env.TEST_DATABASE_URL));
  const cache = shared.cache ?? testCache('identity', redis);
  const bus = shared.bus ?? testBus('identity', undefined, redis);
  return {
    db,
    cache,
    bus,
    async close() {
      await bus.close();
      await cache.close();
      if (!shared.db) await db.close();
    },
  };
}

export async function identityHarness(
  env: NodeJS.ProcessEnv = {},
  shared: SharedStorage = {},
  options: ServiceOptions = {},
): Promise<IdentityHarness> {
  const storage = await harnessStorage(shared);
  const config = loadIdentityConfig({
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'attest-id-')),
    BASE_URL,
    IDENTITY_SECRET: 'identity-test-secret-0123456789abcdef',
    KEY_ENCRYPTION_KEY: 'key-encryption-test-0123456789abcdef',
    LOG_LEVEL: 'silent',
    // production hashes at N=2^17 (128 MiB, a third of a second); tests at 2^10 unless they ask
    PASSWORD_HASH_COST: '10',
    ...env,
  });
  const deps = { config, ...harnessDeps(storage, testLogger, ADMIN_TOKEN) };
  const ctx = buildServices(deps, options);
  const { publicApp, adminApp, close } = serviceHarness(await buildApp(deps, ctx), storage, ADMIN_TOKEN);
  return { publicApp, adminApp, config, ctx, storage, close };
}

export async function createApp(
  h: IdentityHarness,
  redirectUris = [REDIRECT_URI],
  name = 'Test app',
): Promise<{ app_id: string; client_secret: string }> {
  const res = await request(h.adminApp)
    .post('/admin/apps')
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .send({ name, redirect_uris: redirectUris });
  if (res.status !== 201) throw new Error(`app create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

let userCounter = 0;
export async function createUser(
  h: IdentityHarness,
  extra: Record<string, string> = {},
): Promise<{ username: string; password: string; user_id: string }> {
  const username = `user${++userCounter}-${Math.random().toString(36).slice(2, 8)}`;
  const password = 'correct horse battery';
  const res = await request(h.adminApp)
    .post('/admin/users')
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .send({
      username,
      password,
      verification_level: 'orb',
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
      ...extra,
    });
  if (res.status !== 201) throw new Error(`user create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { username, password, user_id: res.body.user_id };
}

export const hidden = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

/** Drives the browser part: authorize → sign in → consent. Returns the last response (redirect to the app, or form_post page). */
export async function browserFlow(
  agent: ReturnType<typeof request.agent>,
  query: Record<string, string>,
  user: { username: string; password: string } | null,
  decision: 'approve' | 'deny' = 'approve',
): Promise<request.Response> {
  let res = await agent.get('/authorize').query(query);
  for (let i = 0; i < 5; i++) {
    const location = res.headers.location as string | undefined;
    if (res.status === 302 || res.status === 303) {
      if (!location || !location.startsWith('/')) return res;
      res = await agent.get(location);
      continue;
    }
    if (res.status !== 200 || !res.text.includes('name="csrf"')) return res;
    const interaction = hidden(res.text, 'interaction');
    const csrf = hidden(res.text, 'csrf');
    if (res.text.includes('name="password"')) {
      if (!user) return res;
      res = await agent
        .post('/signin')
        .type('form')
        .send({ interaction, csrf, username: user.username, password: user.password });
    } else {
      res = await agent.post('/consent').type('form').send({ interaction, csrf, decision });
    }
  }
  return res;
}

/** Parameters the app receives, from a redirect's query or fragment or a form_post page. */
export function callbackParams(res: request.Response): Record<string, string> {
  if (res.status === 200 && res.text.includes('document.forms[0].submit()')) {
    const out: Record<string, string> = {};
    for (const m of res.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      out[m[1]] = m[2]
        .replace(/&amp;/g, '&')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>');
    return out;
  }
  const url = new URL(res.headers.location as string);
  return Object.fromEntries(new URLSearchParams(url.hash ? url.hash.slice(1) : url.search));
}

export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
