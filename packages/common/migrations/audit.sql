-- The audit trail (issue #14): append-only; rows leave only through the AUDIT_RETENTION_DAYS purge.
CREATE TABLE audit_events (
  id             bigserial PRIMARY KEY,
  at             timestamptz NOT NULL DEFAULT now(),
  type           text NOT NULL,
  actor_type     text NOT NULL CHECK (actor_type IN ('operator', 'user', 'app', 'system', 'anonymous')),
  actor          text,
  subject        text,
  request_id     text,
  client_address text,
  detail         jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_events_at_idx ON audit_events (at);
CREATE INDEX audit_events_type_idx ON audit_events (type, id);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only';
END
$$;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();

-- Named operator tokens made with `pnpm manage admin-token create`; only a SHA-256 of each is kept.
CREATE TABLE admin_tokens (
  name       text PRIMARY KEY,
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by text NOT NULL
);
