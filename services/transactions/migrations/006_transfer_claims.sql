-- Issue 23: one on-chain transaction pays at most one recorded payment, across all apps.
--
-- 1. At record time: a recorded payment that has not failed holds its (chain, transaction_hash), so a
--    second record of it is refused (409 transaction_already_claimed). A failed one lets it go (a
--    customer who records someone else's payment with the wrong `from` cannot block it for good).
--    Rows recorded before this migration that share a transaction with another live row (earlier, or
--    already mined) hold nothing: the chain watcher settles them (2).
ALTER TABLE transactions ADD COLUMN claims_transfer boolean NOT NULL DEFAULT true;
UPDATE transactions SET claims_transfer = false WHERE id IN (
  SELECT id FROM (
    SELECT id, row_number() OVER (PARTITION BY chain, transaction_hash ORDER BY status = 'mined' DESC, created_at, id) AS n
    FROM transactions WHERE transaction_hash IS NOT NULL AND status <> 'failed') ranked
  WHERE n > 1);
CREATE UNIQUE INDEX transactions_transfer_claim_idx ON transactions (chain, transaction_hash)
  WHERE transaction_hash IS NOT NULL AND status <> 'failed' AND claims_transfer;

-- 2. When a payment becomes mined: the transaction it was paid by, claimed once. A second record of the
--    same transaction that reaches mined (a race, or rows from before this migration) is failed
--    instead, with the reason already_claimed. log_index is the Transfer log that paid (null: the native
--    value transfer, or a payment mined before claims were kept).
CREATE TABLE transfer_claims (
  chain            text NOT NULL,
  transaction_hash text NOT NULL,
  transaction_id   text NOT NULL UNIQUE REFERENCES transactions (id) ON DELETE CASCADE,
  log_index        integer,
  claimed_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain, transaction_hash)
);
INSERT INTO transfer_claims (chain, transaction_hash, transaction_id, claimed_at)
SELECT DISTINCT ON (chain, transaction_hash) chain, transaction_hash, id, updated_at FROM transactions
WHERE status = 'mined' AND transaction_hash IS NOT NULL
ORDER BY chain, transaction_hash, created_at, id;
