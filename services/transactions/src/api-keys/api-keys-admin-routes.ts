import type { Router } from 'express';
import Joi from 'joi';
import {
  adminRoute,
  adminNotFoundResponse,
  adminValidationResponse,
  errors,
  jsonResponse,
  operatorActor,
  validate,
} from '@attest/common';
import { appIdOf } from '../kernel/admin-route';
import { appIdParams } from '../kernel/admin-params';
import type { ApiKeyService } from '../kernel/api-keys/api-key-service';
import type { ApiKeyRecord, ApiKeyStore } from '../kernel/api-keys/api-key-store';
import { apiKeySchemas } from './api-keys.openapi';

export const createApiKeySchema = Joi.object({ name: Joi.string().trim().max(200).allow(null) });

const publicKey = (k: ApiKeyRecord) => ({
  key_id: k.id,
  app_id: k.appId,
  name: k.name,
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

const keyTags = ['api keys'];
const appTags = ['apps'];

/** The answers of an operation on an app's state here. */
const appStateResponses = {
  200: jsonResponse('The app’s state here', apiKeySchemas.appStatus),
  400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits)'),
};

const appStatus = (appId: string, disabledAt: Date | null) => ({
  app_id: appId,
  disabled: disabledAt !== null,
  disabled_at: disabledAt?.toISOString() ?? null,
});

export interface ApiKeysAdminDeps {
  apiKeys: Pick<ApiKeyService, 'create' | 'setAppDisabled' | 'revoke'>;
  keyStore: Pick<ApiKeyStore, 'listForApp' | 'appDisabledAt'>;
}

/**
 * An app's API keys (create, list, revoke) and its state here (disable, enable, read): while disabled its
 * keys get 401 and its webhook endpoints wait, on every replica at once.
 */
export function apiKeysAdminRoutes(router: Router, deps: ApiKeysAdminDeps): void {
  adminRoute(
    router,
    'POST',
    '/apps/:app_id/api-keys',
    {
      summary: 'Create an API key for an app',
      description: 'The key is in this answer only; it is stored as a keyed hash.',
      tags: keyTags,
      params: appIdParams,
      body: { contentType: 'application/json', schema: createApiKeySchema, required: false },
      responses: {
        201: jsonResponse('The key, shown once, and its record', apiKeySchemas.newApiKey),
        400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits) or name'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      const { name } = validate(createApiKeySchema, req.body);
      const { apiKey, record } = await deps.apiKeys.create(appId, name ?? null, operatorActor(req, res));
      res.status(201).json({ api_key: apiKey, ...publicKey(record) });
    },
  );

  adminRoute(
    router,
    'GET',
    '/apps/:app_id/api-keys',
    {
      summary: 'An app’s API keys, revoked ones included (never the keys themselves)',
      tags: keyTags,
      params: appIdParams,
      responses: {
        200: jsonResponse('The keys', { type: 'array', items: apiKeySchemas.apiKey }),
        400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits)'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      res.json((await deps.keyStore.listForApp(appId)).map(publicKey));
    },
  );

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    adminRoute(
      router,
      'POST',
      `/apps/:app_id/${action}`,
      {
        summary: disabled
          ? 'Disable an app here: its API keys get 401 and its webhook endpoints stop, on every replica at once'
          : 'Enable a disabled app again: its API keys work again and its waiting webhook deliveries go out',
        description:
          'Idempotent. `pnpm manage app ' +
          action +
          '` calls this after the identity service’s own POST /admin/apps/{app_id}/' +
          action +
          ' (which stops its tokens).',
        tags: appTags,
        params: appIdParams,
        responses: appStateResponses,
      },
      async (req, res) => {
        const appId = appIdOf(req);
        const disabledAt = await deps.apiKeys.setAppDisabled(appId, disabled, operatorActor(req, res));
        res.json(appStatus(appId, disabledAt));
      },
    );
  }

  adminRoute(
    router,
    'GET',
    '/apps/:app_id',
    {
      summary: 'Whether an app is disabled here (its API keys and webhooks)',
      tags: appTags,
      params: appIdParams,
      responses: appStateResponses,
    },
    async (req, res) => {
      const appId = appIdOf(req);
      res.json(appStatus(appId, await deps.keyStore.appDisabledAt(appId)));
    },
  );

  adminRoute(
    router,
    'POST',
    '/api-keys/:key_id/revoke',
    {
      summary: 'Revoke an API key; it stops working at once on every replica',
      tags: keyTags,
      responses: {
        200: jsonResponse('The key, with revoked_at', apiKeySchemas.apiKey),
        404: adminNotFoundResponse('no API key with this key_id (attribute key_id)'),
      },
    },
    async (req, res) => {
      const record = await deps.apiKeys.revoke(req.params.key_id, operatorActor(req, res));
      if (!record) throw errors.notFound('No API key with this key_id.', 'key_id');
      res.json(publicKey(record));
    },
  );
}
