import type { Router } from 'express';
import Joi from 'joi';
import { adminRoute, adminValidationResponse, encrypt, jsonResponse, validate, type AuditLog } from '@attest/common';
import { operatorAudit } from '../kernel/admin-route';

export interface X402AdminDeps {
  /** KEY_ENCRYPTION_KEY: what seals X402_RELAYER_KEY, and what this service opens it with. */
  keyEncryptionKey: string;
  audit?: Pick<AuditLog, 'record'>;
}

const sealSchema = Joi.object({
  private_key: Joi.string()
    .pattern(/^0x[0-9a-fA-F]{64}$/)
    .required()
    .description('The relayer account’s private key')
    .messages({ 'string.pattern.base': 'private_key must be 0x followed by 64 hexadecimal digits' }),
})
  .required()
  .messages({ 'object.base': 'The body must be a JSON object.' });

/**
 * POST /admin/x402/relayer-key (`pnpm manage x402 seal-relayer-key`): seals a relayer key with this service's
 * KEY_ENCRYPTION_KEY, for X402_RELAYER_KEY. Nothing is stored; the key is never logged, nor audited (the
 * relayer's address is).
 */
export function x402AdminRoutes(router: Router, deps: X402AdminDeps): void {
  const audit = operatorAudit(deps.audit);
  adminRoute(
    router,
    'POST',
    '/x402/relayer-key',
    {
      summary: 'Seal an x402 relayer key with KEY_ENCRYPTION_KEY, for X402_RELAYER_KEY',
      description:
        'Answers the sealed key (v1.…, AES-256-GCM) and the relayer’s address; stores nothing. Audited ' +
        '(relayer_key.sealed, with the address).',
      tags: ['x402'],
      body: { contentType: 'application/json', schema: sealSchema },
      responses: {
        200: jsonResponse('The sealed key', {
          type: 'object',
          required: ['sealed_key', 'address'],
          properties: { sealed_key: { type: 'string' }, address: { type: 'string' } },
        }),
        400: adminValidationResponse('private_key'),
      },
    },
    async (req, res) => {
      const { private_key: key } = validate(sealSchema, req.body) as { private_key: `0x${string}` };
      const { privateKeyToAccount } = await import('viem/accounts');
      const address = privateKeyToAccount(key).address;
      await audit(req, res, 'relayer_key.sealed', address, { address });
      res.set('Cache-Control', 'no-store').json({ sealed_key: encrypt(deps.keyEncryptionKey, key), address });
    },
  );
}
