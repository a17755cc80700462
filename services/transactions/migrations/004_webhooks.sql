-- Webhook endpoints of apps; secrets sealed with KEY_ENCRYPTION_KEY. During a rotation the previous
-- secret keeps signing until previous_secret_expires_at.
CREATE TABLE webhook_endpoints (
  id                         text PRIMARY KEY,
  app_id                     text NOT NULL,
  url                        text NOT NULL,
  secret_enc                 text NOT NULL,
  previous_secret_enc        text,
  previous_secret_expires_at timestamptz,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  failing_since              timestamptz,
  disabled_at                timestamptz,
  disabled_reason            text
);
CREATE INDEX webhook_endpoints_app_idx ON webhook_endpoints (app_id);

-- The outbox: one row per committed change, written in the change's own transaction. Its id is the
-- webhook-id receivers deduplicate on; body is the exact payload, signed as is on every attempt.
CREATE TABLE webhook_events (
  id             text PRIMARY KEY,
  app_id         text NOT NULL,
  type           text NOT NULL,
  transaction_id text NOT NULL,
  body           text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_events_app_idx ON webhook_events (app_id, created_at);

-- One delivery of an event to an endpoint (redelivery and replay add more); leased by one worker at a time.
CREATE TABLE webhook_deliveries (
  id               text PRIMARY KEY,
  event_id         text NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  lease_until      timestamptz,
  last_status_code integer,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at);

-- The delivery log: every attempt, its answer and how long it took.
CREATE TABLE webhook_attempts (
  id          bigserial PRIMARY KEY,
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt     integer NOT NULL,
  started_at  timestamptz NOT NULL,
  status_code integer,
  error       text,
  latency_ms  integer NOT NULL
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id);
