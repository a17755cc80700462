-- Issue 43: x402 settlements. One row per EIP-3009 authorization (network, token, payer, nonce), claimed
-- before the relayer submits it, so an authorization settles at most once across replicas and retries: the
-- replica that inserts the row submits; every other settle of it waits for and answers the row's outcome.
-- A claim that never got a transaction hash (its replica stopped before submitting) may be taken again
-- after its lease; one with a hash is finished by whoever reads its receipt.
CREATE TABLE x402_settlements (
  network          text NOT NULL,
  token            text NOT NULL,
  payer            text NOT NULL,
  nonce            text NOT NULL,
  app_id           text NOT NULL,
  pay_to           text NOT NULL,
  value            numeric(78, 0) NOT NULL,
  transaction_hash text,
  -- null while in flight; then the SettleResponse answered to every settle of this authorization
  outcome          jsonb,
  transaction_id   text,
  claimed_at       timestamptz NOT NULL DEFAULT now(),
  lease_until      timestamptz NOT NULL,
  settled_at       timestamptz,
  PRIMARY KEY (network, token, payer, nonce)
);
-- the per-app settlements-per-minute limit counts an app's recent claims
CREATE INDEX x402_settlements_app_idx ON x402_settlements (app_id, claimed_at);
