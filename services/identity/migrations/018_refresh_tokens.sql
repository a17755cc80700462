-- Issue 41 (agents): refresh tokens. Each row is one refresh token (only its SHA-256 is stored); a family is
-- every token rotated from one code exchange, and shares its absolute expiry. A token is used once
-- (used_at); its successor is a new row. Reusing a used token of a public client ends the family (every
-- row of it is deleted, and the access tokens it gave are revoked). Rows go with an ended session (sid),
-- a withdrawn consent (user_id, client_id) or an ended family; expired ones are pruned.
CREATE TABLE refresh_tokens (
  token_hash  text PRIMARY KEY,
  family_id   text NOT NULL,
  client_id   text NOT NULL,
  user_id     text NOT NULL,
  grant_data  jsonb NOT NULL,
  sid         text,
  jkt         text,
  access_jti  text NOT NULL,
  issued_at   timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
CREATE INDEX refresh_tokens_family_idx ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_sid_idx ON refresh_tokens (sid);
CREATE INDEX refresh_tokens_user_client_idx ON refresh_tokens (user_id, client_id);
CREATE INDEX refresh_tokens_expires_idx ON refresh_tokens (expires_at);
