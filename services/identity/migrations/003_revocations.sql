-- Security state that must outlive the cache (issue #9, defect 4): access tokens revoked before
-- their expiry, and the codes already exchanged (with the tokens they gave), so a replay after a
-- cache loss still revokes. Rows are pruned once expired.
CREATE TABLE revoked_tokens (
  jti        text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
CREATE INDEX revoked_tokens_expires_at ON revoked_tokens (expires_at);

CREATE TABLE used_codes (
  code_hash  text PRIMARY KEY,
  jtis       text[] NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX used_codes_expires_at ON used_codes (expires_at);
