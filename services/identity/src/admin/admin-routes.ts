import type { Router } from 'express';
import { operatorActor } from '@attest/common';
import type { IdentityContext } from '../routes/context';
import type { StoredKey } from '../store/key-store';
import { appAdminRoutes } from './app-admin';
import { userAdminRoutes } from './user-admin';

export { redirectUriProblem } from './admin-schemas';

const keyJson = (k: StoredKey) => ({
  ...k.publicJwk,
  created_at: k.createdAt.toISOString(),
  retired_at: k.retiredAt?.toISOString() ?? null,
  unpublish_at: k.unpublishAt?.toISOString() ?? null,
  active: k.retiredAt === null,
});

/** Admin API (admin port only): apps, users, signing keys. The audit trail and admin tokens come from common. */
export function identityAdminRoutes(router: Router, ctx: IdentityContext): void {
  appAdminRoutes(router, ctx);
  userAdminRoutes(router, ctx);

  router.get('/keys', async (_req, res) => void res.json({ keys: (await ctx.keys.list()).map(keyJson) }));

  router.post('/keys/rotate', async (req, res) => {
    const rotated = await ctx.keys.rotate();
    await ctx.audit.record({ type: 'signing_key.rotated', actor: operatorActor(req, res), subject: rotated.kid, detail: { retired: rotated.retired } });
    res.json(rotated);
  });
}
