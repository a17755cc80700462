-- RFC 9068 §2.1 (issue 42): a resource server chooses the algorithm its access tokens are signed with. RS256
-- (every resource's so far) keeps the app's own (RS256, or a FAPI 2 app's PS256 or ES256); PS256 or ES256 signs
-- every token for the resource with that algorithm, whatever the app's.
ALTER TABLE resources ADD COLUMN access_token_alg text NOT NULL DEFAULT 'RS256'
  CHECK (access_token_alg IN ('RS256', 'PS256', 'ES256'));
