-- Quote retention (issue 26): quotes and FX rates older than PRICE_QUOTE_RETENTION_DAYS are purged by the
-- service itself (the latest of each source is always kept); these indexes make the purge a range scan.
CREATE INDEX quotes_observed_idx ON quotes (observed_at);
CREATE INDEX fx_rates_observed_idx ON fx_rates (observed_at);
