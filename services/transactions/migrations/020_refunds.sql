-- Issue 44: refunds. The app records a refund it sent (POST /api/v2/client/payment-requests/{id}/refunds):
-- a final transfer of the request's token from one of its receiving addresses to the address that paid,
-- verified on chain when it is recorded. Amounts are integers with 6 decimals, as amount_paid is.
CREATE TABLE refunds (
  id                 text PRIMARY KEY,
  payment_request_id text NOT NULL REFERENCES payment_requests (id),
  app_id             text NOT NULL,
  chain              text NOT NULL,
  transaction_hash   text NOT NULL,
  -- the Transfer log that refunded (null: a native value transfer)
  log_index          integer,
  token              text NOT NULL,
  from_address       text NOT NULL,
  to_address         text NOT NULL,
  amount             numeric(78, 0) NOT NULL CHECK (amount > 0),
  block_number       bigint NOT NULL,
  block_time         timestamptz NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (chain, transaction_hash)
);
CREATE INDEX refunds_payment_request_idx ON refunds (payment_request_id, created_at, id);

-- What the refunds of a request add up to; its status becomes partially_refunded, then refunded.
ALTER TABLE payment_requests ADD COLUMN amount_refunded numeric(78, 0) NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0);
ALTER TABLE payment_requests DROP CONSTRAINT payment_requests_status_check;
ALTER TABLE payment_requests ADD CONSTRAINT payment_requests_status_check CHECK (status IN ('pending', 'detected',
  'paid', 'paid_over', 'underpaid', 'paid_late', 'expired', 'failed', 'canceled', 'partially_refunded', 'refunded'));

-- A transfer is claimed once, by a payment or by a refund: a refund holds its (chain, transaction_hash) in
-- transfer_claims as a mined payment does, so a payment recorded for it afterwards is refused (409
-- transaction_already_claimed) and one recorded before fails with already_claimed when it becomes mined.
ALTER TABLE transfer_claims ALTER COLUMN transaction_id DROP NOT NULL;
ALTER TABLE transfer_claims ADD COLUMN refund_id text UNIQUE REFERENCES refunds (id) ON DELETE CASCADE;
ALTER TABLE transfer_claims ADD CONSTRAINT transfer_claims_holder_check CHECK ((transaction_id IS NULL) <> (refund_id IS NULL));
