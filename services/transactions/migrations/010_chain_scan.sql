-- Issue 25: the chain watcher scans final blocks for token transfers and keeps how far it got, so after a
-- restart (or an outage of its RPCs) it carries on from there and no transfer is missed in between.
CREATE TABLE chain_watch_state (
  chain           text PRIMARY KEY,
  -- the last block scanned; the next scan starts at the block after it
  processed_block bigint NOT NULL CHECK (processed_block >= 0),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- Addresses the watcher keeps transfers for: where recorded payments and payment requests go.
CREATE INDEX transactions_recipient_idx ON transactions (chain, lower(to_address));
CREATE INDEX payment_requests_recipient_idx ON payment_requests (chain, lower(to_address));
CREATE VIEW chain_watched_recipients AS
  SELECT chain, lower(to_address) AS address FROM transactions
  UNION ALL
  SELECT chain, lower(to_address) AS address FROM payment_requests;

-- ERC-20 Transfer logs of a configured token to a watched address, in a final block; addresses lower case.
CREATE TABLE chain_transfers (
  chain            text NOT NULL,
  transaction_hash text NOT NULL,
  log_index        integer NOT NULL,
  block_number     bigint NOT NULL,
  block_hash       text NOT NULL,
  token            text NOT NULL,
  contract         text NOT NULL,
  from_address     text NOT NULL,
  to_address       text NOT NULL,
  value            numeric(78, 0) NOT NULL CHECK (value >= 0),
  seen_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain, transaction_hash, log_index)
);
CREATE INDEX chain_transfers_recipient_idx ON chain_transfers (chain, to_address, block_number);
