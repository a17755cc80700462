CREATE TABLE apps (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  secret_hash   text NOT NULL,
  redirect_uris text[] NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  disabled_at   timestamptz
);

CREATE TABLE users (
  id                 text PRIMARY KEY,
  username           text NOT NULL UNIQUE,
  password_hash      text NOT NULL,
  verification_level text NOT NULL CHECK (verification_level IN ('orb', 'device')),
  name               text,
  given_name         text,
  family_name        text,
  created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE consents (
  user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  app_id     text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  scopes     text[] NOT NULL,
  granted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, app_id)
);

CREATE TABLE signing_keys (
  kid             text PRIMARY KEY,
  public_jwk      jsonb NOT NULL,
  private_key_enc text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  retired_at      timestamptz,
  -- when the last token this key signed has expired: the key leaves the JWKS then
  unpublish_at    timestamptz
);
