import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import {
  harnessDeps,
  serviceHarness,
  testLogger,
  testStorage,
  type ServiceHarness,
  type TestStorageOptions,
} from '@attest/testing';
import { buildApp } from '../src/app';
import { loadTransactionsConfig, type TransactionsConfig } from '../src/config';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const ADDRESS_A = `0x${'a'.repeat(40)}`;
export const ADDRESS_B = `0x${'b'.repeat(40)}`;

export interface TransactionsHarness extends ServiceHarness {
  config: TransactionsConfig;
}

export async function transactionsHarness(
  env: NodeJS.ProcessEnv = {},
  shared: TestStorageOptions = {},
): Promise<TransactionsHarness> {
  const storage = await testStorage('transactions', path.join(__dirname, '..', 'migrations'), shared);
  const config = loadTransactionsConfig({
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'attest-tx-')),
    API_KEY_SECRET: 'api-key-test-secret-0123456789abcdef',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const built = await buildApp({ config, ...harnessDeps(storage, testLogger, ADMIN_TOKEN) });
  return { ...serviceHarness(built, storage, ADMIN_TOKEN), config };
}

export const newAppId = () => `app_${[...Array(32)].map(() => Math.floor(Math.random() * 16).toString(16)).join('')}`;

export async function apiKeyFor(h: TransactionsHarness, appId: string): Promise<{ api_key: string; key_id: string }> {
  const res = await h.admin('post', `/apps/${appId}/api-keys`).send({ name: 'test' });
  if (res.status !== 201) throw new Error(`api key: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Adds `address` (default ADDRESS_B, the `to` the tests pay) to the app's receiving addresses on `chain`, as an
 * operator does (POST /admin/apps/{app_id}/receiving-addresses): an app records payments and creates payment
 * requests only to its own addresses, and one app receives at an address.
 */
export async function receiveAt(h: TransactionsHarness, appId: string, address = ADDRESS_B, chain = 'worldchain') {
  const res = await h.admin('post', `/apps/${appId}/receiving-addresses`).send({ chain, address });
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`receiving address: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { app_id: string; chain: string; address: string; proof: string; created_at: string };
}

export async function recordTransaction(h: TransactionsHarness, appId: string, extra: Record<string, string> = {}) {
  const res = await h.admin('post', '/transactions').send({
    app_id: appId,
    type: 'pay',
    reference: `order-${Math.random().toString(36).slice(2)}`,
    from: ADDRESS_A,
    to: ADDRESS_B,
    chain: 'worldchain',
    token: 'USDCE',
    token_amount: '1500000',
    ...extra,
  });
  if (res.status !== 201) throw new Error(`record: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, string>;
}

/** POST /api/v2/client/transaction with an app's API key, as an app records a payment. */
export const postTransaction = (h: TransactionsHarness, apiKey: string, body: Record<string, unknown>) =>
  request(h.publicApp).post('/api/v2/client/transaction').set('Authorization', `Bearer ${apiKey}`).send(body);

/** GET /api/v2/client/transaction/{id} as a merchant backend checks a payment. */
export const lookupTransaction = (h: TransactionsHarness, apiKey: string, id: string, appId: string, type = 'pay') =>
  request(h.publicApp)
    .get(`/api/v2/client/transaction/${id}`)
    .query({ app_id: appId, type })
    .set('Authorization', `Bearer ${apiKey}`);

/** Accounts that sign (EIP-191), to prove receiving addresses; re-exported for the identity service's portal tests. */
export { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
