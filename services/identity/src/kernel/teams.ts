import { errors, type AuditActor, type AuditLog } from '@attest/common';
import type { MemberRole, MemberStore, Member } from './member-store';
import type { UserDirectory } from './directories';

/** owner ⊃ developer ⊃ viewer: what each role may do at least. */
const RANK: Record<MemberRole, number> = { viewer: 0, developer: 1, owner: 2 };
export const roleAllows = (role: MemberRole, needed: MemberRole) => RANK[role] >= RANK[needed];

/**
 * An app's team (issue 27): the admin API and the portal both change it through here, so the rules (an
 * existing user, the last owner stays) and the audit events are the same whoever acts.
 */
export class AppTeams {
  constructor(
    private readonly store: MemberStore,
    private readonly users: Pick<UserDirectory, 'findByUsername'>,
    private readonly audit: Pick<AuditLog, 'record'>,
  ) {}

  list(appId: string): Promise<Member[]> {
    return this.store.listForApp(appId);
  }

  appsOf(userId: string): Promise<{ appId: string; role: MemberRole }[]> {
    return this.store.appsOf(userId);
  }

  async roleOf(appId: string, userId: string): Promise<MemberRole | null> {
    return (await this.store.find(appId, userId))?.role ?? null;
  }

  /** Adds a person by username, or changes their role. Throws not_found (app_id or username), last_owner. */
  async put(
    appId: string,
    username: string,
    role: MemberRole,
    actor: AuditActor,
    detail: Record<string, unknown> = {},
  ): Promise<{ member: Member; added: boolean }> {
    const user = await this.users.findByUsername(username);
    if (!user) throw errors.notFound('No user with this username.', 'username');
    const before = await this.store.find(appId, user.id);
    if (before?.role === 'owner' && role !== 'owner') await this.keepAnOwner(appId);
    const member = await this.store.put(appId, user.id, role, actor.id ?? actor.type);
    if (!member) throw errors.notFound('No app with this app_id.', 'app_id');
    await this.audit.record({
      type: before ? 'app.member_changed' : 'app.member_added',
      actor,
      subject: appId,
      detail: { ...detail, user_id: user.id, username: user.username, role, ...(before ? { was: before.role } : {}) },
    });
    return { member, added: !before };
  }

  /** Takes a person off the team. Throws not_found (user_id), last_owner. */
  async remove(appId: string, userId: string, actor: AuditActor, detail: Record<string, unknown> = {}): Promise<void> {
    const member = await this.store.find(appId, userId);
    if (!member) throw errors.notFound('This person is not a member of this app.', 'user_id');
    if (member.role === 'owner') await this.keepAnOwner(appId);
    if (!(await this.store.remove(appId, userId)))
      throw errors.notFound('This person is not a member of this app.', 'user_id');
    await this.audit.record({
      type: 'app.member_removed',
      actor,
      subject: appId,
      detail: { ...detail, user_id: userId, username: member.username, role: member.role },
    });
  }

  /** An app with owners keeps at least one: someone must be able to manage its team. */
  private async keepAnOwner(appId: string): Promise<void> {
    if ((await this.store.ownerCount(appId)) <= 1)
      throw errors.conflict(
        'last_owner',
        'This is the app’s last owner: make someone else owner first, so the team can still be managed.',
        'role',
      );
  }
}
