import type { ApiInfo } from '@attest/common';
import { appSchemas } from './app-admin';
import { keySchemas } from './key-admin';
import { memberSchemas } from './member-admin';
import { sessionSchemas } from './session-admin';
import { userSchemas } from './user-admin';
import { resourceSchemas } from '../resources';

// The admin document: its info here; each operation is documented beside its route (documentAdminRoute), and
// each component schema beside the routes that answer with it.

/** The identity admin API's document: info and the shapes its operations answer with. */
export function identityAdminApi(): ApiInfo {
  return {
    title: 'Attest identity admin API',
    version: '1',
    description:
      'Apps and their teams, resources, users, their sessions and consents, signing keys, the audit trail and admin tokens. ' +
      'Every /admin operation needs an admin token (Authorization: Bearer).',
    serverUrl: '/',
    components: {
      schemas: {
        ...appSchemas,
        User: userSchemas.User,
        ...memberSchemas,
        UserWithConsents: userSchemas.UserWithConsents,
        ...sessionSchemas,
        ...keySchemas,
        ...resourceSchemas,
      },
    },
  };
}
