-- Issue 42 (agents, part 2): delegation by OAuth 2.0 Token Exchange (RFC 8693).
-- may_act_for_users: the operator lets the app (an agent) exchange a person's access token issued to another
-- app for a token of its own that acts for that person (`pnpm manage app update … --may-act-for-users`).
ALTER TABLE apps ADD COLUMN may_act_for_users boolean NOT NULL DEFAULT false;

-- One row per person and agent that acted for them: the resources and the scopes (as <uri>#<scope>) of the
-- tokens it was given, since when and when it last exchanged one. The person ends it on the account page
-- (ended_at): its delegated tokens stop, its refresh tokens end; a later exchange starts it again.
CREATE TABLE delegations (
  user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  agent_id      text NOT NULL,
  resources     text[] NOT NULL,
  scopes        text[] NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz NOT NULL DEFAULT now(),
  ended_at      timestamptz,
  PRIMARY KEY (user_id, agent_id)
);
