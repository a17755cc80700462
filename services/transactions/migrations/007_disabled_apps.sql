-- Issue 23: the apps an operator disabled (`pnpm manage app disable`, POST /admin/apps/{app_id}/disable).
-- Their API keys get 401 (the key's row is read with this one, so the lookup costs nothing more) and
-- their webhook endpoints are not delivered to (their deliveries wait), until the app is enabled again.
CREATE TABLE disabled_apps (
  app_id      text PRIMARY KEY,
  disabled_at timestamptz NOT NULL DEFAULT now()
);
