CREATE INDEX transactions_app_idx ON transactions (app_id, created_at DESC, id DESC);

\include @attest/common/migrations/audit.sql
