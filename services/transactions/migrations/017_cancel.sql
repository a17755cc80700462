-- Issue 44: the app cancels an open (pending) payment request: status canceled, canceled_at noted. A
-- payment that completes it afterwards is recorded and flagged like a late one (paid_late, reason
-- paid_after_cancel), never paid.
ALTER TABLE payment_requests DROP CONSTRAINT payment_requests_status_check;
ALTER TABLE payment_requests ADD CONSTRAINT payment_requests_status_check CHECK (status IN ('pending', 'detected',
  'paid', 'paid_over', 'underpaid', 'paid_late', 'expired', 'failed', 'canceled'));
ALTER TABLE payment_requests ADD COLUMN canceled_at timestamptz;
