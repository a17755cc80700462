-- Issue 41 (agents): apps no operator created. `registration` says how an app came to be:
--   operator           the admin API (`pnpm manage app create`) or the developer portal
--   dynamic            RFC 7591 Dynamic Client Registration (POST /register)
--   metadata_document  a Client ID Metadata Document: the app's id is the https URL of the document,
--                      fetched again when its HTTP caching says (metadata_expires_at)
ALTER TABLE apps ADD COLUMN registration text NOT NULL DEFAULT 'operator'
  CHECK (registration IN ('operator', 'dynamic', 'metadata_document'));
ALTER TABLE apps ADD COLUMN metadata_expires_at timestamptz;
-- RFC 7592: the registration access token of a dynamic registration, as a keyed hash (never in clear)
ALTER TABLE apps ADD COLUMN registration_token_hash text;
-- the initial access token a registration presented (CLIENT_REGISTRATION=token); null: an open registration
ALTER TABLE apps ADD COLUMN registered_with text;
-- the client metadata as registered (RFC 7591 §3.2.1), given back by RFC 7592 reads
ALTER TABLE apps ADD COLUMN registered_metadata jsonb;
CREATE INDEX apps_dynamic_created ON apps (created_at) WHERE registration = 'dynamic';

-- Initial access tokens (RFC 7591 §3): `pnpm manage registration-token create`, shown once, kept hashed
CREATE TABLE registration_tokens (
  id           text PRIMARY KEY,
  name         text NOT NULL,
  token_hash   text NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz,
  revoked_at   timestamptz,
  last_used_at timestamptz
);
