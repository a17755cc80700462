import { createHash } from 'node:crypto';
import path from 'node:path';
import { migrate, readMigrations, type Db } from '@attest/common';
import { testDatabase } from '@attest/testing';
import { refreshStore } from '../src/refresh';

const MIGRATIONS = path.join(__dirname, '..', 'migrations');
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
const grant = { sub: 'sub-1', scopes: ['openid'], acr: 'urn:x', authTime: 1_700_000_000, familyIat: 1_700_000_000 };

describe('migration 029 (refresh_families): refresh tokens stored before it keep working', () => {
  let db: Db;
  beforeAll(async () => {
    db = await testDatabase('identity_m029');
    await migrate(
      db,
      readMigrations(MIGRATIONS).filter((m) => m.version < 29),
    );
  });
  afterAll(() => db.close());

  it('makes each family’s row from its tokens; a used token stays used, the unused one rotates', async () => {
    const expires = new Date(Date.now() + 3600_000);
    const insert = `INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, grant_data, sid, jkt, access_jti,
                      issued_at, expires_at, used_at) VALUES ($1, $2, 'app-1', 'user-1', $3, 'sid-1', 'jkt-1', $4, $5, $6, $7)`;
    const json = JSON.stringify(grant);
    await db.query(insert, [hashOf('a'), 'fam-1', json, 'jti-a', new Date(Date.now() - 2000), expires, new Date()]);
    await db.query(insert, [hashOf('b'), 'fam-1', json, 'jti-b', new Date(Date.now() - 1000), expires, null]);
    await db.query(insert, [hashOf('c'), 'fam-2', json, 'jti-c', new Date(), expires, null]);

    await migrate(db, readMigrations(MIGRATIONS));

    const families = await db.query('SELECT * FROM refresh_families ORDER BY family_id');
    expect(families).toEqual([
      {
        family_id: 'fam-1',
        client_id: 'app-1',
        user_id: 'user-1',
        grant_data: grant,
        sid: 'sid-1',
        jkt: 'jkt-1',
        expires_at: expires,
      },
      {
        family_id: 'fam-2',
        client_id: 'app-1',
        user_id: 'user-1',
        grant_data: grant,
        sid: 'sid-1',
        jkt: 'jkt-1',
        expires_at: expires,
      },
    ]);
    const store = refreshStore(db);
    expect(await store.find(hashOf('a'))).toMatchObject({ familyId: 'fam-1', usedAt: expect.any(Date) });
    expect(await store.find(hashOf('b'))).toEqual({
      tokenHash: hashOf('b'),
      familyId: 'fam-1',
      clientId: 'app-1',
      userId: 'user-1',
      grant,
      sid: 'sid-1',
      jkt: 'jkt-1',
      accessJti: 'jti-b',
      expiresAt: expires,
      usedAt: null,
    });
    const next = hashOf('d');
    expect(
      await store.rotateMany([
        { usedHash: hashOf('a'), nextHash: hashOf('x'), accessJti: 'jti-x' },
        { usedHash: hashOf('b'), nextHash: next, accessJti: 'jti-d' },
      ]),
    ).toEqual(new Set([next]));
    expect(await store.find(next)).toMatchObject({
      familyId: 'fam-1',
      accessJti: 'jti-d',
      usedAt: null,
      expiresAt: expires,
    });
    // a family ends with all its tokens, old and new, and answers the access tokens they gave
    expect((await store.endFamily('fam-1')).sort()).toEqual(['jti-a', 'jti-b', 'jti-d']);
    expect(await db.query('SELECT family_id FROM refresh_tokens')).toEqual([{ family_id: 'fam-2' }]);
    expect(await store.endForSids(['sid-1'])).toBe(1);
    expect(await db.query('SELECT 1 FROM refresh_families')).toEqual([]);
  });
});
