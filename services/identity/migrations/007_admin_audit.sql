-- Users can be disabled (they cannot sign in; their tokens stop working).
ALTER TABLE users ADD COLUMN disabled_at timestamptz;
CREATE INDEX users_username_idx ON users (username text_pattern_ops);

\include @attest/common/migrations/audit.sql
