-- Issue 24: a per-app security profile. fapi2 (FAPI 2.0 Security Profile) bundles settings that exist
-- on their own (pushed requests, DPoP, private_key_jwt, a PS256/ES256 id_token) and adds what only the
-- profile enforces (PKCE S256 and response_type=code at /authorize, codes living at most 60 s).
-- none: each setting as it is set.
ALTER TABLE apps ADD COLUMN profile text NOT NULL DEFAULT 'none' CHECK (profile IN ('none', 'fapi2'));
-- an app under fapi2 has every setting the profile fixes: no path (admin API, a bad merge) can loosen one
ALTER TABLE apps ADD CONSTRAINT apps_fapi2_settings CHECK (
  profile <> 'fapi2' OR (
    require_pushed_authorization_requests
    AND dpop_bound_access_tokens
    AND token_endpoint_auth_method = 'private_key_jwt'
    AND id_token_signed_response_alg IN ('PS256', 'ES256')
  )
);
