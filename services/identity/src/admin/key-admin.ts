import type { Router } from 'express';
import {
  adminValidationResponse,
  type AuditLog,
  DATE_TIME,
  documentAdminRoute,
  jsonResponse,
  type JsonSchema,
  NULLABLE_DATE_TIME,
  operatorActor,
  validate,
} from '@attest/common';
import type { StoredKey } from '../kernel/key-store';
import type { SigningKeys } from '../kernel/signing-keys';
import { ref } from './admin-openapi';
import { rotateKeySchema } from './admin-schemas';

/** The admin document's schema of a signing key. */
export const keySchemas: Record<string, JsonSchema> = {
  SigningKey: {
    type: 'object',
    required: [
      'kty',
      'kid',
      'alg',
      'use',
      'status',
      'created_at',
      'activated_at',
      'retired_at',
      'unpublish_at',
      'active',
    ],
    description:
      'The public JWK (n and e of an RSA key, crv, x and y of an EC key), its state and its dates. Every ' +
      'algorithm discovery advertises has an active key from start, and a next key published ahead of its ' +
      'scheduled rotation.',
    properties: {
      kty: { enum: ['RSA', 'EC'] },
      kid: { type: 'string' },
      alg: { enum: ['RS256', 'PS256', 'ES256'] },
      use: { const: 'sig' },
      n: { type: 'string' },
      e: { type: 'string' },
      crv: { const: 'P-256' },
      x: { type: 'string' },
      y: { type: 'string' },
      status: {
        enum: ['active', 'next', 'retired'],
        description:
          'active: signs new tokens of its algorithm; next: published ahead, signs from the next rotation; ' +
          'retired: published until the tokens it signed have expired',
      },
      created_at: { ...DATE_TIME, description: 'When it was made and published' },
      activated_at: { ...NULLABLE_DATE_TIME, description: 'When it started signing (null: not yet)' },
      retired_at: NULLABLE_DATE_TIME,
      unpublish_at: { ...NULLABLE_DATE_TIME, description: 'When it leaves the JWKS (its tokens expired)' },
      active: { type: 'boolean', description: 'The key new tokens of its algorithm are signed with' },
    },
  },
};

const statusOf = (k: StoredKey): 'active' | 'next' | 'retired' =>
  k.retiredAt !== null ? 'retired' : k.activatedAt === null ? 'next' : 'active';

const keyJson = (k: StoredKey) => {
  const { kty, n, e, crv, x, y } = k.publicJwk;
  return {
    ...(kty === 'EC' ? { kty, crv, x, y } : { kty, n, e }),
    kid: k.kid,
    alg: k.alg,
    use: 'sig',
    status: statusOf(k),
    created_at: k.createdAt.toISOString(),
    activated_at: k.activatedAt?.toISOString() ?? null,
    retired_at: k.retiredAt?.toISOString() ?? null,
    unpublish_at: k.unpublishAt?.toISOString() ?? null,
    active: statusOf(k) === 'active',
  };
};

/** What the signing keys of the admin API use. */
export interface KeyAdminDeps {
  keys: Pick<SigningKeys, 'list' | 'rotate'>;
  audit: Pick<AuditLog, 'record'>;
}

/** The signing keys: list, rotate (an emergency rotation revokes the earlier keys at once). */
export function keyAdminRoutes(router: Router, deps: KeyAdminDeps): void {
  documentAdminRoute(router, 'GET', '/keys', {
    summary: 'The published signing keys, newest first',
    tags: ['signing keys'],
    responses: {
      200: jsonResponse('The keys', {
        type: 'object',
        required: ['keys'],
        additionalProperties: false,
        properties: { keys: { type: 'array', items: ref('SigningKey') } },
      }),
    },
  });
  router.get('/keys', async (_req, res) => void res.json({ keys: (await deps.keys.list()).map(keyJson) }));

  documentAdminRoute(router, 'POST', '/keys/rotate', {
    summary: 'Sign with the next key, or a new one, from now on, for every algorithm',
    description:
      'For each algorithm (RS256, PS256, ES256) the next key, when one is published (within 10 minutes of a ' +
      'scheduled rotation), else a new key, signs from now. The old key stays published until the tokens it signed ' +
      'have expired. With `revoke_previous` (emergency rotation, a key may be compromised) new keys sign at once ' +
      'and every earlier key, the next ones included, leaves the JWKS at once; the tokens they signed are ' +
      'inactive at /introspect and /userinfo on every replica. The answer names the RS256 keys.',
    tags: ['signing keys'],
    body: { contentType: 'application/json', schema: rotateKeySchema, required: false },
    responses: {
      200: jsonResponse('The new key id, the one it replaced, and the keys revoked', {
        type: 'object',
        required: ['kid', 'retired', 'revoked'],
        additionalProperties: false,
        properties: {
          kid: { type: 'string' },
          retired: { type: ['string', 'null'] },
          revoked: { type: 'array', items: { type: 'string' }, description: 'Kids taken out of the JWKS at once' },
        },
      }),
      400: adminValidationResponse('revoke_previous'),
    },
  });
  router.post('/keys/rotate', async (req, res) => {
    const body = validate(rotateKeySchema, req.body ?? {});
    const rotated = await deps.keys.rotate({ revokePrevious: body.revoke_previous === true });
    await deps.audit.record({
      type: 'signing_key.rotated',
      actor: operatorActor(req, res),
      subject: rotated.kid,
      detail: { retired: rotated.retired, revoked: rotated.revoked },
    });
    for (const kid of rotated.revoked)
      await deps.audit.record({
        type: 'signing_key.revoked',
        actor: operatorActor(req, res),
        subject: kid,
        detail: { replaced_by: rotated.kid },
      });
    res.json(rotated);
  });
}
