-- Issue 41 (agents): resources an operator registers (`pnpm manage resource create`, /admin/resources).
-- A resource is an API (an MCP server, a tool server) that accepts Attest's access tokens: a client asks
-- for a token for it with RFC 8707's `resource` parameter, and the token's `aud` is its uri. `scopes` are
-- the scopes it offers; `min_verification_level` is the lowest level a person needs for a token for it.
-- The resource server authenticates at /introspect with its id and a secret (stored as a keyed hash).
CREATE TABLE resources (
  id                     text PRIMARY KEY,
  uri                    text NOT NULL UNIQUE,
  name                   text NOT NULL,
  scopes                 text[] NOT NULL DEFAULT '{}',
  min_verification_level text CHECK (min_verification_level IN ('orb', 'device')),
  secret_hash            text NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);
