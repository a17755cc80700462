// Every OpenAPI document the services serve (public and admin) is valid OpenAPI 3.1 for a real validator,
// @readme/openapi-parser (what Swagger tooling and code generators use), not only for our own checks
// (issue 40, item 15: identity's DPoP scheme carried bearerFormat, which 3.1 allows only with scheme bearer).
import type { Express } from 'express';
import request from 'supertest';
import { compileErrors, validate } from '@readme/openapi-parser';
import { withHarness } from '@attest/testing';
import { ADMIN_TOKEN as IDENTITY_ADMIN, identityHarness } from '../services/identity/test/support';
import { ADMIN_TOKEN as TRANSACTIONS_ADMIN, transactionsHarness } from '../services/transactions/test/support';
import { ADMIN_TOKEN as PRICES_ADMIN, pricesHarness } from '../services/prices/test/support';

interface Apps {
  publicApp: Express;
  adminApp: Express;
}

async function documents(h: Apps, adminToken: string): Promise<Record<string, unknown>> {
  const pub = await request(h.publicApp).get('/openapi.json');
  const admin = await request(h.adminApp).get('/openapi.json').set('Authorization', `Bearer ${adminToken}`);
  expect([pub.status, admin.status]).toEqual([200, 200]);
  return { public: pub.body as unknown, admin: admin.body as unknown };
}

async function expectValid(docs: Record<string, unknown>) {
  for (const [name, doc] of Object.entries(docs)) {
    expect((doc as { openapi: string }).openapi).toMatch(/^3\.1\./);
    // validate() dereferences in place: give it a copy
    const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
    expect({ document: name, errors: result.valid ? '' : compileErrors(result) }).toEqual({
      document: name,
      errors: '',
    });
  }
}

describe('OpenAPI 3.1 validity (@readme/openapi-parser)', () => {
  it('identity', () => withHarness(identityHarness, async (h) => expectValid(await documents(h, IDENTITY_ADMIN))));
  it('transactions', () =>
    withHarness(transactionsHarness, async (h) => expectValid(await documents(h, TRANSACTIONS_ADMIN))));
  it('prices', () => withHarness(pricesHarness, async (h) => expectValid(await documents(h, PRICES_ADMIN))));
});
