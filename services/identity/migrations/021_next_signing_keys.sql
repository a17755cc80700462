-- Issue 40, item 2: every advertised algorithm has its keys from start, and a key is published before it
-- signs. activated_at: when the key started signing; NULL for the next key of its algorithm, published
-- (in the JWKS) ahead of its use by more than the JWKS cache lifetime. Keys made before were used at once.
ALTER TABLE signing_keys ADD COLUMN activated_at timestamptz;
UPDATE signing_keys SET activated_at = created_at;
