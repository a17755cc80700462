-- Passkeys (WebAuthn credentials). An account made by passkey sign-up has no password.
ALTER TABLE users ALTER COLUMN password_hash DROP NOT NULL;

CREATE TABLE passkeys (
  -- the credential id, base64url, as the authenticator reports it
  id           text PRIMARY KEY,
  user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  public_key   bytea NOT NULL,
  counter      bigint NOT NULL DEFAULT 0,
  transports   text[] NOT NULL DEFAULT '{}',
  name         text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
CREATE INDEX passkeys_user_id ON passkeys (user_id);
