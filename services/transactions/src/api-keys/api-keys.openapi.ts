import { DATE_TIME, NULLABLE_DATE_TIME, type JsonSchema } from '@attest/common';
import { nullableString, object, ref } from '../kernel/openapi';

const API_KEY_PROPERTIES: Record<string, JsonSchema> = {
  key_id: { type: 'string' },
  app_id: { type: 'string' },
  name: nullableString,
  created_at: DATE_TIME,
  last_used_at: NULLABLE_DATE_TIME,
  revoked_at: NULLABLE_DATE_TIME,
};

/** The admin document's schemas of API keys. */
export const apiKeyAdminComponents: Record<string, JsonSchema> = {
  ApiKey: object(API_KEY_PROPERTIES),
  NewApiKey: object({
    api_key: { type: 'string', description: 'Shown once; only its hash is kept' },
    ...API_KEY_PROPERTIES,
  }),
};

/** The admin document's schema of an app's state here. */
export const appAdminComponents: Record<string, JsonSchema> = {
  AppStatus: object({
    app_id: { type: 'string' },
    disabled: { type: 'boolean', description: 'Its API keys get 401 and its webhooks wait while true' },
    disabled_at: NULLABLE_DATE_TIME,
  }),
};

export const apiKeySchemas = {
  apiKey: ref('ApiKey'),
  newApiKey: ref('NewApiKey'),
  appStatus: ref('AppStatus'),
};
