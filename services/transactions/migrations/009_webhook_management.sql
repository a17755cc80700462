-- Issue 25: webhooks an app manages itself, and events it can pull.
--   description, enabled_events: the app's label and event-type filter (NULL: every event type).
--   consecutive_failures: failed attempts in a row (throttling answers not counted); failing_notified_at:
--   when this failing streak was reported (once per streak; cleared by a success).
--   throttled_until: a 429/502/503/504 pauses every delivery to the endpoint until then.
ALTER TABLE webhook_endpoints
  ADD COLUMN description text,
  ADD COLUMN enabled_events text[],
  ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0,
  ADD COLUMN failing_notified_at timestamptz,
  ADD COLUMN throttled_until timestamptz;

-- Events that are not about a transaction (test events, endpoint notifications) have no transaction_id.
-- endpoint_id: an event addressed to one endpoint only (a test event); NULL for the app's events.
-- seq and tx give the events list (GET /api/v2/client/events) an order that never changes: by the
-- writing transaction's id, then by insertion; rows are only listed once every transaction older than
-- the reader's snapshot has ended, so a cursor never skips an event that commits late.
ALTER TABLE webhook_events ALTER COLUMN transaction_id DROP NOT NULL;
ALTER TABLE webhook_events
  ADD COLUMN endpoint_id text,
  ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY,
  ADD COLUMN tx xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX webhook_events_list_idx ON webhook_events (app_id, tx, seq);
CREATE INDEX webhook_events_created_idx ON webhook_events (created_at);
CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (created_at) WHERE status <> 'pending';
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);
