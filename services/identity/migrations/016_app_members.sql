-- Issue 27 (the developer portal): an app's team. An operator (admin API, `pnpm manage app add-member`)
-- or an owner in the portal makes a person a member of an app with a role:
--   owner      everything a developer may, and the team itself (add and remove members), disable the app
--   developer  the app's settings, its client secret and its API keys
--   viewer     reads the app's pages; changes nothing
-- A person sees in the portal only the apps they are a member of. The rows go with the app or the user.
CREATE TABLE app_members (
  app_id     text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role       text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
  added_at   timestamptz NOT NULL DEFAULT now(),
  added_by   text NOT NULL,
  PRIMARY KEY (app_id, user_id)
);
CREATE INDEX app_members_user_idx ON app_members (user_id);
