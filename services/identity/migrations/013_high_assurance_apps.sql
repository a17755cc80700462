-- Issue 24 (FAPI 2.0 building blocks): key-based client authentication (private_key_jwt, RFC 7523),
-- signed request objects (RFC 9101) verified against the app's own keys, pushed authorization
-- requests (RFC 9126) an app may require, and the id_token signing algorithm an app asks for.
ALTER TABLE apps DROP CONSTRAINT IF EXISTS apps_secret_matches_auth_method;
ALTER TABLE apps DROP CONSTRAINT IF EXISTS apps_token_endpoint_auth_method_check;
ALTER TABLE apps ADD CONSTRAINT apps_token_endpoint_auth_method_check
  CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'));
-- a secret exactly when the app authenticates with one: a private_key_jwt app has none to leak
ALTER TABLE apps ADD CONSTRAINT apps_secret_matches_auth_method
  CHECK ((token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post')) = (secret_hash IS NOT NULL));
-- the app's public keys (a JWK Set), inline or at an https URL: at most one of the two
ALTER TABLE apps ADD COLUMN jwks jsonb;
ALTER TABLE apps ADD COLUMN jwks_uri text;
ALTER TABLE apps ADD CONSTRAINT apps_one_key_source CHECK (jwks IS NULL OR jwks_uri IS NULL);
ALTER TABLE apps ADD COLUMN require_pushed_authorization_requests boolean NOT NULL DEFAULT false;
ALTER TABLE apps ADD COLUMN id_token_signed_response_alg text NOT NULL DEFAULT 'RS256'
  CHECK (id_token_signed_response_alg IN ('RS256', 'PS256', 'ES256'));
-- a set of signing keys per algorithm (a key is never used with two), each rotated as the RS256 set is;
-- the PS256 and ES256 sets are made when an app first needs one
ALTER TABLE signing_keys ADD COLUMN alg text NOT NULL DEFAULT 'RS256' CHECK (alg IN ('RS256', 'PS256', 'ES256'));
