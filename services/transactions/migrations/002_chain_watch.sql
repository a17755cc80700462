-- lease for the chain watcher: one replica checks a pending transaction at a time
ALTER TABLE transactions ADD COLUMN watch_lease_until timestamptz;
ALTER TABLE transactions ADD COLUMN last_checked_at timestamptz;
