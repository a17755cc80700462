-- Browser sessions (issue #11): durable, so they can be listed and ended and outlive a cache loss;
-- each process serves them from memory (domain/sessions.ts). The cookie is kept only as a hash; `id`
-- is the public session id (never a credential). Times are written by the application's clock.
CREATE TABLE sessions (
  id           text PRIMARY KEY,
  cookie_hash  text NOT NULL UNIQUE,
  user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  auth_time    timestamptz NOT NULL,
  amr          text[] NOT NULL,
  -- the apps this session signed in to (their back-channel logout is due when it ends)
  client_ids   text[] NOT NULL DEFAULT '{}',
  device       text,
  address      text,
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_user_id ON sessions (user_id);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

ALTER TABLE apps
  ADD COLUMN post_logout_redirect_uris text[] NOT NULL DEFAULT '{}',
  ADD COLUMN backchannel_logout_uri text;

-- Back-channel logout outbox: written in the transaction that ends a session, delivered at least once.
CREATE TABLE logout_deliveries (
  id              bigserial PRIMARY KEY,
  app_id          text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  uri             text NOT NULL,
  sub             text NOT NULL,
  sid             text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  lease_until     timestamptz,
  last_error      text,
  gave_up_at      timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX logout_deliveries_due ON logout_deliveries (next_attempt_at) WHERE gave_up_at IS NULL;
