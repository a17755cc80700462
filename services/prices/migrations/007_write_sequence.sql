-- The price stream's event ids (issue 40, item 11): quotes and FX rates draw their ids from one sequence, so
-- the largest id is a version of the stored prices that every replica reads alike and that orders every
-- write; a stream reconnected with an older version is sent the answers written since (see writesSince).
SELECT setval('quotes_id_seq', GREATEST((SELECT COALESCE(max(id), 0) FROM quotes), (SELECT COALESCE(max(id), 0) FROM fx_rates)) + 1, false);
ALTER TABLE fx_rates ALTER COLUMN id SET DEFAULT nextval('quotes_id_seq');
