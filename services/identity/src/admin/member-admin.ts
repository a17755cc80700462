import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  DATE_TIME,
  documentAdminRoute,
  emptyResponse,
  errorResponse,
  errors,
  jsonResponse,
  type JsonSchema,
  operatorActor,
  validate,
} from '@attest/common';
import type { AppDirectory } from '../kernel/directories';
import type { AppTeams } from '../kernel/teams';
import type { Member } from '../kernel/member-store';
import { object, ref } from './admin-openapi';
import { putMemberSchema } from './admin-schemas';

/** The admin document's schema of a member. */
export const memberSchemas: Record<string, JsonSchema> = {
  Member: object({
    app_id: { type: 'string' },
    user_id: { type: 'string' },
    username: { type: 'string' },
    role: { enum: ['owner', 'developer', 'viewer'] },
    added_at: DATE_TIME,
    added_by: { type: 'string', description: 'The operator, or the user_id of the owner who added them' },
  }),
};
const memberSchema = ref('Member');

export const memberJson = (m: Member) => ({
  app_id: m.appId,
  user_id: m.userId,
  username: m.username,
  role: m.role,
  added_at: m.addedAt.toISOString(),
  added_by: m.addedBy,
});

const appParams = Joi.object({ id: Joi.string().description('The app_id') });
const tags = ['app members'];

/** What the teams of the admin API use. */
export interface MemberAdminDeps {
  apps: Pick<AppDirectory, 'find'>;
  teams: Pick<AppTeams, 'list' | 'put' | 'remove'>;
}

/** An app's team for the developer portal: who may see (viewer), change (developer) or manage (owner) it. */
export function memberAdminRoutes(router: Router, deps: MemberAdminDeps): void {
  documentAdminRoute(router, 'GET', '/apps/:id/members', {
    summary: 'An app’s team: its members and their roles, owners first',
    tags,
    params: appParams,
    responses: {
      200: jsonResponse('The members', { type: 'array', items: memberSchema }),
      404: adminNotFoundResponse('no app with this app_id (attribute app_id)'),
    },
  });
  router.get('/apps/:id/members', async (req, res) => {
    if (!(await deps.apps.find(req.params.id))) throw errors.notFound('No app with this app_id.', 'app_id');
    res.json((await deps.teams.list(req.params.id)).map(memberJson));
  });

  documentAdminRoute(router, 'PUT', '/apps/:id/members', {
    summary: 'Make a person a member of an app, or change their role',
    description:
      'owner: everything, and the team; developer: settings, client secret, API keys; viewer: reads only. ' +
      'The last owner of an app cannot be made anything else (last_owner).',
    tags,
    params: appParams,
    body: { contentType: 'application/json', schema: putMemberSchema },
    responses: {
      200: jsonResponse('The member, whose role changed', memberSchema),
      201: jsonResponse('The member, added', memberSchema),
      400: adminValidationResponse('username or role'),
      404: adminNotFoundResponse('no app with this app_id, or no user with this username (attribute app_id, username)'),
      409: errorResponse('last_owner: the app’s only owner cannot become developer or viewer'),
    },
  });
  router.put('/apps/:id/members', async (req, res) => {
    const body = validate(putMemberSchema, req.body);
    const { member, added } = await deps.teams.put(req.params.id, body.username, body.role, operatorActor(req, res));
    res.status(added ? 201 : 200).json(memberJson(member));
  });

  documentAdminRoute(router, 'DELETE', '/apps/:id/members/:userId', {
    summary: 'Take a person off an app’s team',
    tags,
    params: appParams.keys({ userId: Joi.string().description('The member’s user_id') }),
    responses: {
      204: emptyResponse('Removed'),
      404: adminNotFoundResponse('not a member of this app (attribute user_id)'),
      409: errorResponse('last_owner: the app’s only owner stays'),
    },
  });
  router.delete('/apps/:id/members/:userId', async (req, res) => {
    await deps.teams.remove(req.params.id, req.params.userId, operatorActor(req, res));
    res.status(204).end();
  });
}
