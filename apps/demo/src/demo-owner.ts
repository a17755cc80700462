import type { AuditActor, Logger } from '@attest/common';
import type { OperatorCreatedUserHook } from '../../../services/identity/src/kernel/operator-hook';
import type { User } from '../../../services/identity/src/kernel/user-store';

type Teams = Parameters<OperatorCreatedUserHook>[1];

export interface DemoOwner {
  /** The identity service's hook (ContextOptions.onOperatorCreatedUser). */
  onOperatorCreatedUser: OperatorCreatedUserHook;
  /** The demo app is registered: a user created before then gets it now. */
  demoStarted(appId: string): Promise<void>;
}

/**
 * pnpm start only: the user an operator creates (admin API or `pnpm manage user create`, never a self
 * sign-up) with the username DEMO_OWNER_USERNAME becomes the owner of the demo app, so the walk-through's
 * alice finds a populated developer portal. Only while the demo app's team is empty: it never changes a
 * team someone has already set up. Audited as `app.member_added` under the operator who created the user,
 * with `detail.via` "pnpm start" and `detail.setting` "DEMO_OWNER_USERNAME".
 */
export function demoOwner(username: string, logger: Logger): DemoOwner {
  let appId: string | undefined;
  let waiting: { user: User; operator: AuditActor; teams: Teams } | undefined;

  const grant = async (demoAppId: string, user: User, operator: AuditActor, teams: Teams) => {
    try {
      if ((await teams.list(demoAppId)).length > 0) return;
      await teams.put(demoAppId, user.username, 'owner', operator, {
        via: 'pnpm start',
        setting: 'DEMO_OWNER_USERNAME',
      });
      logger.info('the demo app has its owner: they see it in the developer portal', {
        app_id: demoAppId,
        username: user.username,
      });
    } catch (err) {
      // the user exists either way: a demo app gone meanwhile leaves it without an owner, nothing more
      logger.warn('could not make the demo app’s owner', { username: user.username, error: (err as Error).message });
    }
  };

  return {
    async onOperatorCreatedUser({ user, operator }, teams) {
      if (user.username !== username) return;
      if (appId) await grant(appId, user, operator, teams);
      else waiting = { user, operator, teams };
    },
    async demoStarted(id) {
      appId = id;
      if (waiting) await grant(id, waiting.user, waiting.operator, waiting.teams);
      waiting = undefined;
    },
  };
}
