-- Issue 41 (bench "refresh"): what every token of a refresh token family shares (app, person, grant, sid, DPoP
-- key, absolute expiry) moves to one row per family, refresh_families. A rotation then marks the used token used
-- and stores a narrow successor row (hash, family, access token id): two index entries instead of the five a
-- copy of the whole row took, and the marking can stay on its page (HOT: used_at is in no index, and the table
-- leaves room on each page). Measured in PGlite (pnpm exec tsx packages/common/test/refresh-rotation-statements.ts):
-- CPU per rotation in statements of 14, ~0.09-0.11 ms before, ~0.07 ms after.
-- Every existing token keeps working: each family's row is made from its tokens' (they all hold the same).
-- The families of ended sessions, withdrawn consents and expired lifetimes go with their tokens.
CREATE TABLE refresh_families (
  family_id   text PRIMARY KEY,
  client_id   text NOT NULL,
  user_id     text NOT NULL,
  grant_data  jsonb NOT NULL,
  sid         text,
  jkt         text,
  expires_at  timestamptz NOT NULL
);
INSERT INTO refresh_families (family_id, client_id, user_id, grant_data, sid, jkt, expires_at)
SELECT DISTINCT ON (family_id) family_id, client_id, user_id, grant_data, sid, jkt, expires_at
FROM refresh_tokens
ORDER BY family_id, issued_at;
CREATE INDEX refresh_families_sid_idx ON refresh_families (sid);
CREATE INDEX refresh_families_user_client_idx ON refresh_families (user_id, client_id);
CREATE INDEX refresh_families_expires_idx ON refresh_families (expires_at);

DROP INDEX refresh_tokens_sid_idx;
DROP INDEX refresh_tokens_user_client_idx;
DROP INDEX refresh_tokens_expires_idx;
ALTER TABLE refresh_tokens
  DROP COLUMN client_id,
  DROP COLUMN user_id,
  DROP COLUMN grant_data,
  DROP COLUMN sid,
  DROP COLUMN jkt,
  DROP COLUMN expires_at;
-- room on each page for the row's next version (marked used) beside it
ALTER TABLE refresh_tokens SET (fillfactor = 80);
