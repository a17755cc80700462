import type { AuditActor } from '@attest/common';
import type { AppTeams } from './teams';
import type { User } from './user-store';

/**
 * What runs after an operator created a user through the admin API (POST /admin/users), before the answer
 * is sent: the user, the operator (the actor of the audit events it records) and the app teams. pnpm start
 * makes its demo app's first owner with it (apps/demo/src/demo-owner.ts).
 */
export type OperatorCreatedUserHook = (
  created: { user: User; operator: AuditActor },
  teams: Pick<AppTeams, 'list' | 'put'>,
) => Promise<void>;
