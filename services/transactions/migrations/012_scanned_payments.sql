-- Issue 25: transfers the scanner keeps are attached to payment requests, so a customer who pays a request's
-- `to` without anyone recording the transaction hash is still counted.
--
-- block_time: the time of the block (when a transfer is late). outcome: what the watcher made of it, once
-- (null: not considered yet) — attached (a payment of payment_request_id, the transactions row
-- transaction_id), recorded (its transaction was already recorded or claimed: the recorded payment
-- decides), unmatched (no open request for its recipient and token), ambiguous (several, none owed exactly
-- this amount). Only attached transfers count; the others stay here for the operator.
ALTER TABLE chain_transfers ADD COLUMN block_time timestamptz;
ALTER TABLE chain_transfers ADD COLUMN outcome text
  CHECK (outcome IN ('attached', 'recorded', 'unmatched', 'ambiguous'));
ALTER TABLE chain_transfers ADD COLUMN payment_request_id text;
ALTER TABLE chain_transfers ADD COLUMN transaction_id text;
ALTER TABLE chain_transfers ADD COLUMN considered_at timestamptz;
CREATE INDEX chain_transfers_unconsidered_idx ON chain_transfers (chain, block_number, log_index) WHERE outcome IS NULL;

-- The watcher notes the chain head while a payment is in a block that is not final, or a request is detected.
CREATE INDEX transactions_in_block_idx ON transactions (chain) WHERE status = 'pending' AND chain_block_number IS NOT NULL;
CREATE INDEX payment_requests_detected_idx ON payment_requests (chain) WHERE status = 'detected';
