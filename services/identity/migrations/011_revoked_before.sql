-- Issue 23 (trust review), item 8: an app's access tokens issued before the user withdrew its consent
-- stay inactive when the app is approved again. A row says "tokens of this key issued before `before`
-- are revoked"; it is kept until every such token has expired, then pruned.
CREATE TABLE revoked_before (
  key        text PRIMARY KEY,
  before     timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX revoked_before_expires_at ON revoked_before (expires_at);
