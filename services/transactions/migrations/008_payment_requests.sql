-- Issue 25: payment requests. An app asks for an amount of one token on one chain to one address, by a
-- deadline; the wallet's payments (transactions rows naming the request) count toward it.
--
-- Amounts are integers with 6 decimals, as token_amount is. A fiat-priced request keeps the fiat price it
-- was asked in and the token price it was converted at (with when that price was observed, and where from).
CREATE TABLE payment_requests (
  id                 text PRIMARY KEY,
  app_id             text NOT NULL,
  reference          text NOT NULL,
  status             text NOT NULL CHECK (status IN ('pending', 'detected', 'paid', 'paid_over', 'underpaid', 'paid_late', 'expired', 'failed')),
  status_reason      text,
  status_detail      text,
  chain              text NOT NULL,
  token              text NOT NULL,
  to_address         text NOT NULL,
  amount_due         numeric(78, 0) NOT NULL CHECK (amount_due > 0),
  amount_paid        numeric(78, 0) NOT NULL DEFAULT 0 CHECK (amount_paid >= 0),
  fiat_amount        text,
  fiat_currency      text,
  price_amount       text,
  price_decimals     integer,
  price_observed_at  timestamptz,
  price_source       text,
  expires_in_seconds integer NOT NULL,
  expires_at         timestamptz NOT NULL,
  metadata           text,
  -- the amount policy it was settled under (the app's, when it was created)
  underpayment_tolerance_percent numeric(5, 2) NOT NULL DEFAULT 0,
  flag_overpayment   boolean NOT NULL DEFAULT true,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (app_id, reference)
);
CREATE INDEX payment_requests_app_idx ON payment_requests (app_id, created_at, id);
CREATE INDEX payment_requests_expiry_idx ON payment_requests (expires_at) WHERE status = 'pending';

-- Per-app amount policy (`pnpm manage app payment-policy`); an app without a row has the defaults.
CREATE TABLE payment_amount_policies (
  app_id                         text PRIMARY KEY,
  underpayment_tolerance_percent numeric(5, 2) NOT NULL DEFAULT 0 CHECK (underpayment_tolerance_percent BETWEEN 0 AND 50),
  flag_overpayment               boolean NOT NULL DEFAULT true,
  updated_at                     timestamptz NOT NULL DEFAULT now()
);

-- A recorded payment may name the request it pays; amount_received is what the chain moved (6 decimals),
-- known once it is mined; paid_late: its block came after the request's expiry.
ALTER TABLE transactions ADD COLUMN payment_request_id text REFERENCES payment_requests (id);
ALTER TABLE transactions ADD COLUMN amount_received numeric(78, 0);
ALTER TABLE transactions ADD COLUMN block_time timestamptz;
CREATE INDEX transactions_payment_request_idx ON transactions (payment_request_id) WHERE payment_request_id IS NOT NULL;

-- Where each chain's head was when the watcher last looked (the confirmations of a payment).
CREATE TABLE chain_heads (
  chain        text PRIMARY KEY,
  block_number bigint NOT NULL,
  seen_at      timestamptz NOT NULL DEFAULT now()
);

-- Events of payment requests go through the same outbox; an event is about a transaction or a request.
ALTER TABLE webhook_events ALTER COLUMN transaction_id DROP NOT NULL;
ALTER TABLE webhook_events ADD COLUMN payment_request_id text;
CREATE INDEX webhook_events_payment_request_idx ON webhook_events (payment_request_id) WHERE payment_request_id IS NOT NULL;
