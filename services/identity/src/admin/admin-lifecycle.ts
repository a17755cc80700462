import type { Request, Response, Router } from 'express';
import { documentAdminRoute, type AdminOperationDoc } from '@attest/common';

/** When a row (an app, a user) was made and whether it is disabled, as the admin API shows it. */
export const lifecycleJson = (row: { createdAt: Date; disabledAt: Date | null }) => ({
  created_at: row.createdAt.toISOString(),
  disabled: row.disabledAt !== null,
  disabled_at: row.disabledAt?.toISOString() ?? null,
});

/** POST `${path}/disable`, then `${path}/enable`, each documented: `disabled` true, then false. */
export function disableEnableRoutes(
  router: Router,
  path: string,
  doc: (disabled: boolean) => AdminOperationDoc,
  handler: (req: Request, res: Response, disabled: boolean) => Promise<void>,
): void {
  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    documentAdminRoute(router, 'POST', `${path}/${action}`, doc(disabled));
    router.post(`${path}/${action}`, (req, res) => handler(req, res, disabled));
  }
}
