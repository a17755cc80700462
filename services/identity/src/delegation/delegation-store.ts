import type { Queryable } from '@attest/common';

/** An agent acting for a person (024_delegations.sql): what it was given, since when, when it last exchanged. */
export interface Delegation {
  userId: string;
  agentId: string;
  /** The resources (uris) of the tokens it got. */
  resources: string[];
  /** Their scopes, each as `<uri>#<scope>`. */
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date;
  endedAt: Date | null;
}

interface DelegationRow {
  user_id: string;
  agent_id: string;
  resources: string[];
  scopes: string[];
  created_at: Date;
  last_used_at: Date;
  ended_at: Date | null;
}

const toDelegation = (r: DelegationRow): Delegation => ({
  userId: r.user_id,
  agentId: r.agent_id,
  resources: r.resources,
  scopes: r.scopes,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  endedAt: r.ended_at,
});

/** delegations: one row per person and agent. */
export function delegationStore(db: Queryable) {
  return {
    /**
     * An exchange: the row begins, or gains the resource and scopes and is marked used now; an ended one
     * begins again with only these, but only for a subject token issued after the end (`subjectIssuedAt`,
     * seconds; the same rule as Revocations.revokedBeforeIssue): an exchange under way when the person ended
     * the agent never brings it back. False when the row stays ended. `at` begins a new row (the tokens' clock,
     * as ended_at and a login hint's iat).
     */
    async used(
      userId: string,
      agentId: string,
      resource: string,
      scopes: string[],
      subjectIssuedAt: number,
      at: Date,
    ): Promise<boolean> {
      const rows = await db.query(
        `INSERT INTO delegations (user_id, agent_id, resources, scopes, created_at) VALUES ($1, $2, $3, $4, $6)
         ON CONFLICT (user_id, agent_id) DO UPDATE SET
           resources = CASE WHEN delegations.ended_at IS NULL
             THEN ARRAY(SELECT DISTINCT unnest(delegations.resources || EXCLUDED.resources) ORDER BY 1)
             ELSE EXCLUDED.resources END,
           scopes = CASE WHEN delegations.ended_at IS NULL
             THEN ARRAY(SELECT DISTINCT unnest(delegations.scopes || EXCLUDED.scopes) ORDER BY 1)
             ELSE EXCLUDED.scopes END,
           created_at = CASE WHEN delegations.ended_at IS NULL THEN delegations.created_at ELSE $6 END,
           last_used_at = now(),
           ended_at = NULL
         WHERE delegations.ended_at IS NULL OR $5 >= ceil(extract(epoch FROM delegations.ended_at))
         RETURNING 1`,
        [userId, agentId, [resource], scopes.map((s) => `${resource}#${s}`), subjectIssuedAt, at],
      );
      return rows.length === 1;
    },
    /**
     * The person names the agent for CIBA (a login_hint_token made on the account page): the row begins with
     * no resource, or is marked used now; an ended one begins again, empty, from `at` (the tokens' clock, as
     * the hint's iat).
     */
    async named(userId: string, agentId: string, at: Date): Promise<Delegation> {
      const [row] = await db.query<DelegationRow>(
        `INSERT INTO delegations (user_id, agent_id, resources, scopes, created_at) VALUES ($1, $2, '{}', '{}', $3)
         ON CONFLICT (user_id, agent_id) DO UPDATE SET
           resources = CASE WHEN delegations.ended_at IS NULL THEN delegations.resources ELSE '{}' END,
           scopes = CASE WHEN delegations.ended_at IS NULL THEN delegations.scopes ELSE '{}' END,
           created_at = CASE WHEN delegations.ended_at IS NULL THEN delegations.created_at ELSE $3 END,
           last_used_at = now(),
           ended_at = NULL
         RETURNING *`,
        [userId, agentId, at],
      );
      return toDelegation(row!);
    },
    /** The row of the person and agent while it acts for them (not ended), or null. */
    async active(userId: string, agentId: string): Promise<Delegation | null> {
      const [row] = await db.query<DelegationRow>(
        `SELECT * FROM delegations WHERE user_id = $1 AND agent_id = $2 AND ended_at IS NULL`,
        [userId, agentId],
      );
      return row ? toDelegation(row) : null;
    },
    /** The person's agents still acting for them, the last used first. */
    async listForUser(userId: string): Promise<Delegation[]> {
      const rows = await db.query<DelegationRow>(
        `SELECT * FROM delegations WHERE user_id = $1 AND ended_at IS NULL ORDER BY last_used_at DESC, agent_id`,
        [userId],
      );
      return rows.map(toDelegation);
    },
    /** Ends it at `at` (the moment its tokens stop); null when the person has no such agent acting for them. */
    async end(userId: string, agentId: string, at: Date): Promise<Delegation | null> {
      const [row] = await db.query<DelegationRow>(
        `UPDATE delegations SET ended_at = $3 WHERE user_id = $1 AND agent_id = $2 AND ended_at IS NULL RETURNING *`,
        [userId, agentId, at],
      );
      return row ? toDelegation(row) : null;
    },
  };
}
export type DelegationStore = ReturnType<typeof delegationStore>;
