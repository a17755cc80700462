-- Issue 40 (item 13): the delivery log shows what each attempt got back. response_body: the first 4096
-- bytes of the endpoint's answer, as text (NULL: no answer: a connection error or a timeout before the
-- status line); response_body_truncated: the answer was longer. The request body is the event's own
-- (webhook_events.body), the same on every attempt, so it is not copied here; no header is kept.
ALTER TABLE webhook_attempts
  ADD COLUMN response_body text,
  ADD COLUMN response_body_truncated boolean NOT NULL DEFAULT false;
