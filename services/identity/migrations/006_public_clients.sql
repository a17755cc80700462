-- Public clients (RFC 8252, OAuth 2.0 for browser-based apps): no secret, PKCE S256 required, code flow only.
ALTER TABLE apps ALTER COLUMN secret_hash DROP NOT NULL;
ALTER TABLE apps ADD COLUMN token_endpoint_auth_method text NOT NULL DEFAULT 'client_secret_basic'
  CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'none'));
ALTER TABLE apps ADD CONSTRAINT apps_secret_matches_auth_method
  CHECK ((token_endpoint_auth_method = 'none') = (secret_hash IS NULL));
-- origins (scheme://host[:port]) whose pages may call /token from the browser (CORS)
ALTER TABLE apps ADD COLUMN web_origins text[] NOT NULL DEFAULT '{}';
