-- why a transaction has its status (e.g. the chain watcher's failure reason: wrong_amount, reverted, …)
ALTER TABLE transactions ADD COLUMN status_reason text;
ALTER TABLE transaction_status_history ADD COLUMN reason text;
ALTER TABLE transaction_status_history ADD COLUMN reason_detail text;
-- the block the watcher last saw the transaction in, before it was final: a different one (or none) is a reorganisation
ALTER TABLE transactions ADD COLUMN chain_block_number bigint;
ALTER TABLE transactions ADD COLUMN chain_block_hash text;
