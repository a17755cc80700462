-- Issue 24: DPoP (RFC 9449). An app with dpop_bound_access_tokens (the RFC 9449 §5.2 client metadata
-- name) gets access tokens only for a token request carrying a DPoP proof; the others may still send one.
ALTER TABLE apps ADD COLUMN dpop_bound_access_tokens boolean NOT NULL DEFAULT false;
