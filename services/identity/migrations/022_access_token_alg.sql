-- Issue 40, item 5: the algorithm an app's access tokens are signed with. RS256 for every app as before;
-- a fapi2 app's are PS256 or ES256 (FAPI 2.0 Security Profile §5.4 allows PS256, ES256 and EdDSA only),
-- PS256 unless it chooses ES256.
ALTER TABLE apps ADD COLUMN access_token_signed_response_alg text NOT NULL DEFAULT 'RS256'
  CHECK (access_token_signed_response_alg IN ('RS256', 'PS256', 'ES256'));
UPDATE apps SET access_token_signed_response_alg = 'PS256' WHERE profile = 'fapi2';
ALTER TABLE apps DROP CONSTRAINT apps_fapi2_settings;
ALTER TABLE apps ADD CONSTRAINT apps_fapi2_settings CHECK (
  profile <> 'fapi2' OR (
    require_pushed_authorization_requests
    AND dpop_bound_access_tokens
    AND token_endpoint_auth_method = 'private_key_jwt'
    AND id_token_signed_response_alg IN ('PS256', 'ES256')
    AND access_token_signed_response_alg IN ('PS256', 'ES256')
  )
);
