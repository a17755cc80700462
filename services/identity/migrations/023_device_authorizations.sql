-- Issue 41 (agents): the Device Authorization Grant (RFC 8628). An app may use it only when an operator (or
-- its registration's grant_types) enabled it: `device_authorization_grant`.
ALTER TABLE apps ADD COLUMN device_authorization_grant boolean NOT NULL DEFAULT false;

-- One row per POST /device_authorization. The device code (the client's secret, 256 bits) and the user code
-- (what the person types) are kept only as keyed hashes. `request` is what the client asked for (scopes,
-- resource, acr values, claims); `grant_data` what the person approved (subject, sign-in, session). A
-- decision is made once (status), the tokens are given once (redeemed_at, set by a single UPDATE); polling
-- faster than interval_seconds adds 5 s to it (slow_down). Rows are pruned once expired.
CREATE TABLE device_authorizations (
  device_code_hash text PRIMARY KEY,
  user_code_hash   text NOT NULL UNIQUE,
  client_id        text NOT NULL,
  request          jsonb NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied')),
  user_id          text,
  grant_data       jsonb,
  interval_seconds integer NOT NULL,
  last_polled_at   timestamptz,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  decided_at       timestamptz,
  redeemed_at      timestamptz
);
CREATE INDEX device_authorizations_expires_idx ON device_authorizations (expires_at);
