// Every operation's documented answers match what it sends (issue 40, item 14): each operation of the six
// documents (public and admin of each service) is walked — a request valid where easy, a method its path
// does not have, a junk body and a body of the wrong type — and each answer's status must be documented for
// the operation (or by its `default`) with the Content-Type the document lists for that status. The
// documents are read from the apps, so an endpoint added later is walked too.
import type { Express } from 'express';
import request from 'supertest';
import { walkDocument, withHarness, type WalkedDocument } from '@attest/testing';
import { ADMIN_TOKEN as IDENTITY_ADMIN, identityHarness } from '../services/identity/test/support';
import { ADMIN_TOKEN as TRANSACTIONS_ADMIN, transactionsHarness } from '../services/transactions/test/support';
import { ADMIN_TOKEN as PRICES_ADMIN, pricesHarness } from '../services/prices/test/support';

interface Apps {
  publicApp: Express;
  adminApp: Express;
}

async function walkBoth(h: Apps, adminToken: string) {
  const auth = { authorization: `Bearer ${adminToken}` };
  const pub = await request(h.publicApp).get('/openapi.json');
  const admin = await request(h.adminApp).get('/openapi.json').set(auth);
  expect([pub.status, admin.status]).toEqual([200, 200]);
  const publicDoc = pub.body as WalkedDocument;
  const adminDoc = admin.body as WalkedDocument;
  expect(Object.keys(publicDoc.paths).length).toBeGreaterThan(0);
  expect(Object.keys(adminDoc.paths).length).toBeGreaterThan(0);
  const found = {
    public: await walkDocument(h.publicApp, publicDoc),
    admin: await walkDocument(h.adminApp, adminDoc, { headers: auth }),
  };
  expect(found).toEqual({ public: [], admin: [] });
}

describe('every operation answers only what its document says (status and Content-Type)', () => {
  it('identity', () => withHarness(identityHarness, (h) => walkBoth(h, IDENTITY_ADMIN)));
  it('transactions', () => withHarness(transactionsHarness, (h) => walkBoth(h, TRANSACTIONS_ADMIN)));
  it('prices', () => withHarness(pricesHarness, (h) => walkBoth(h, PRICES_ADMIN)));
});
