-- Issue 42 (agents, part 2): Client-Initiated Backchannel Authentication (CIBA Core 1.0) with Rich Authorization
-- Requests (RFC 9396). An app may ask a person, by their pairwise sub, to approve one action; the person sees
-- it on the account page and approves it with a fresh proof (a passkey with user verification, or the password)
-- or denies it; the app then gets tokens carrying the approved authorization_details, once.
--
-- How an app receives the outcome: poll (the default: it asks /token) or ping (we POST {auth_req_id} to its
-- backchannel_client_notification_endpoint). Null: CIBA not enabled for the app.
ALTER TABLE apps
  ADD COLUMN backchannel_token_delivery_mode text CHECK (backchannel_token_delivery_mode IN ('poll', 'ping')),
  ADD COLUMN backchannel_client_notification_endpoint text;
ALTER TABLE apps ADD CONSTRAINT apps_ciba_ping_endpoint CHECK (
  backchannel_token_delivery_mode IS DISTINCT FROM 'ping' OR backchannel_client_notification_endpoint IS NOT NULL
);

-- One row per backchannel authentication request. Only the SHA-256 of its auth_req_id is kept; `id` is the
-- request's public id on the account page's forms. status: pending → approved | denied; approved → redeemed
-- (once, by an UPDATE … WHERE status = 'approved': atomic across replicas). The ping mode's
-- client_notification_token is kept encrypted (it is sent back to the app as a bearer token).
CREATE TABLE backchannel_requests (
  id                         text PRIMARY KEY,
  auth_req_hash              text NOT NULL UNIQUE,
  app_id                     text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  user_id                    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  sub                        text NOT NULL,
  scopes                     text[] NOT NULL,
  binding_message            text,
  acr_values                 text[] NOT NULL DEFAULT '{}',
  authorization_details      jsonb,
  notification_token         text,
  status                     text NOT NULL DEFAULT 'pending'
                             CHECK (status IN ('pending', 'approved', 'denied', 'redeemed')),
  created_at                 timestamptz NOT NULL,
  expires_at                 timestamptz NOT NULL,
  decided_at                 timestamptz,
  acr                        text,
  amr                        text[]
);
CREATE INDEX backchannel_requests_user_idx ON backchannel_requests (user_id, status);
CREATE INDEX backchannel_requests_expires_idx ON backchannel_requests (expires_at);
