-- Several sources per pair (issue 26): the served price is the median of each source's latest fresh quote.
-- quote_sources names every (pair, source) that ever quoted, kept by a trigger on quotes so any writer
-- (a feed, the admin API, a bench seed) is covered; the latest quote of each is one probe of quotes_source_idx.
CREATE TABLE quote_sources (
  token  text NOT NULL REFERENCES tokens (code),
  fiat   text NOT NULL REFERENCES fiat_currencies (code),
  source text NOT NULL,
  PRIMARY KEY (token, fiat, source)
);
CREATE INDEX quotes_source_idx ON quotes (token, fiat, source, observed_at DESC, id DESC);
INSERT INTO quote_sources (token, fiat, source) SELECT DISTINCT token, fiat, source FROM quotes;

CREATE FUNCTION quote_sources_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO quote_sources (token, fiat, source) VALUES (NEW.token, NEW.fiat, NEW.source) ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER quotes_note_source AFTER INSERT ON quotes FOR EACH ROW EXECUTE FUNCTION quote_sources_note();
