import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  DATE_TIME,
  documentAdminRoute,
  errors,
  jsonResponse,
  NULLABLE_DATE_TIME,
  operatorActor,
  validate,
  type AuditLog,
  type JsonSchema,
} from '@attest/common';
import type { IdentityConfig } from '../config';
import { randomHex } from '../kernel/crypto';
import { hashInitialAccessToken } from './registrations';
import type { RegistrationStore, RegistrationToken } from './registration-store';

/** What the admin API of initial access tokens uses. */
export interface RegistrationAdminDeps {
  config: Pick<IdentityConfig, 'secret' | 'clientRegistration'>;
  audit: Pick<AuditLog, 'record'>;
  store: RegistrationStore;
  now: () => number;
}

const TOKEN_PROPERTIES: Record<string, JsonSchema> = {
  id: { type: 'string', pattern: '^rgt_[0-9a-f]{16}$' },
  name: { type: 'string' },
  created_at: DATE_TIME,
  expires_at: NULLABLE_DATE_TIME,
  revoked_at: NULLABLE_DATE_TIME,
  last_used_at: NULLABLE_DATE_TIME,
};
const tokenSchema: JsonSchema = {
  type: 'object',
  required: Object.keys(TOKEN_PROPERTIES),
  additionalProperties: false,
  properties: TOKEN_PROPERTIES,
};

const tokenJson = (t: RegistrationToken) => ({
  id: t.id,
  name: t.name,
  created_at: t.createdAt.toISOString(),
  expires_at: t.expiresAt?.toISOString() ?? null,
  revoked_at: t.revokedAt?.toISOString() ?? null,
  last_used_at: t.lastUsedAt?.toISOString() ?? null,
});

const createSchema = Joi.object({
  name: Joi.string().trim().min(1).max(200).required().description('Who or what the token is for'),
  expires_in_days: Joi.number().integer().min(1).max(3650).description('Unset: until revoked'),
});
const params = Joi.object({ id: Joi.string().description('The token’s id (rgt_…)') });
const tags = ['registration tokens'];

/**
 * /admin/registration-tokens: initial access tokens (RFC 7591 §3) for CLIENT_REGISTRATION=token. The token is
 * in the creation answer only; kept as a keyed hash; usable for any number of registrations until it is
 * revoked or expires. Each creation and revocation is audited.
 */
export function registrationAdminRoutes(router: Router, deps: RegistrationAdminDeps): void {
  documentAdminRoute(router, 'POST', '/registration-tokens', {
    summary: 'Create an initial access token for /register (shown once)',
    description:
      'For CLIENT_REGISTRATION=token: a client presents it as Authorization: Bearer at POST /register. Stored as a ' +
      'keyed hash only. It works for any number of registrations until revoked or expired.',
    tags,
    body: { contentType: 'application/json', schema: createSchema },
    responses: {
      201: jsonResponse('The token (shown once) and its record', {
        ...tokenSchema,
        required: [...Object.keys(TOKEN_PROPERTIES), 'token', 'client_registration'],
        properties: {
          ...TOKEN_PROPERTIES,
          token: { type: 'string', pattern: '^reg_[0-9a-f]{48}$' },
          client_registration: {
            enum: ['off', 'open', 'token'],
            description: 'The policy in force: the token is accepted only under token',
          },
        },
      }),
      400: adminValidationResponse('name or expires_in_days'),
    },
  });
  router.post('/registration-tokens', async (req, res) => {
    const body = validate(createSchema, req.body ?? {});
    const token = `reg_${randomHex(24)}`;
    const expiresAt = body.expires_in_days ? new Date(deps.now() + body.expires_in_days * 86400000) : null;
    const created = await deps.store.insertToken(
      `rgt_${randomHex(8)}`,
      body.name,
      hashInitialAccessToken(deps.config.secret, token),
      expiresAt,
    );
    await deps.audit.record({
      type: 'registration_token.created',
      actor: operatorActor(req, res),
      subject: created.id,
      detail: { name: created.name, expires_at: created.expiresAt?.toISOString() ?? null },
    });
    res.status(201).json({ ...tokenJson(created), token, client_registration: deps.config.clientRegistration });
  });

  documentAdminRoute(router, 'GET', '/registration-tokens', {
    summary: 'The initial access tokens, oldest first (never the tokens themselves)',
    tags,
    responses: {
      200: jsonResponse('Every token, revoked and expired ones too', {
        type: 'object',
        required: ['registration_tokens'],
        additionalProperties: false,
        properties: { registration_tokens: { type: 'array', items: tokenSchema } },
      }),
    },
  });
  router.get('/registration-tokens', async (_req, res) => {
    res.json({ registration_tokens: (await deps.store.listTokens()).map(tokenJson) });
  });

  documentAdminRoute(router, 'POST', '/registration-tokens/:id/revoke', {
    summary: 'Revoke an initial access token: registrations with it are refused from now on',
    description: 'The clients it registered stay (disable them as apps).',
    tags,
    params,
    responses: {
      200: jsonResponse('The token’s record', tokenSchema),
      404: adminNotFoundResponse('no token with this id (attribute id)'),
    },
  });
  router.post('/registration-tokens/:id/revoke', async (req, res) => {
    const revoked = await deps.store.revokeToken(String(req.params.id));
    if (!revoked) throw errors.notFound('No registration token with this id.', 'id');
    await deps.audit.record({
      type: 'registration_token.revoked',
      actor: operatorActor(req, res),
      subject: revoked.id,
      detail: { name: revoked.name },
    });
    res.json(tokenJson(revoked));
  });
}
