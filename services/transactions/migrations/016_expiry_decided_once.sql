-- Issue 44: expiry is decided once. expired_at is when the service first reported the request `expired`
-- (the sweep, a read, or a reorganisation taking a detected request back past its expiry), on the
-- database's clock; from then on a payment for it is paid_late whatever its block's (whole-second) time.
ALTER TABLE payment_requests ADD COLUMN expired_at timestamptz;
UPDATE payment_requests SET expired_at = updated_at WHERE status = 'expired';
