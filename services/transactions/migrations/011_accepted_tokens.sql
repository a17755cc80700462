-- Issue 25: a payment request accepts a list of tokens of its chain, each with its own amount due (a
-- fiat price converted at each token's price when the request was created, kept with that price's
-- observed_at and source).
CREATE TABLE payment_request_tokens (
  payment_request_id text NOT NULL REFERENCES payment_requests (id) ON DELETE CASCADE,
  token              text NOT NULL,
  -- the order the app listed them in
  position           integer NOT NULL,
  amount_due         numeric(78, 0) NOT NULL CHECK (amount_due > 0),
  price_amount       text,
  price_decimals     integer,
  price_observed_at  timestamptz,
  price_source       text,
  PRIMARY KEY (payment_request_id, token)
);
INSERT INTO payment_request_tokens (payment_request_id, token, position, amount_due, price_amount, price_decimals,
  price_observed_at, price_source)
SELECT id, token, 0, amount_due, price_amount, price_decimals, price_observed_at, price_source FROM payment_requests;

-- The token the request is settled in (token, amount_due and price_* are that accepted token's): the only
-- accepted one, or the token of the first payment recorded for it that has not failed. Null while several
-- are accepted and no payment is recorded (or all of them failed). Every payment toward a request is in
-- its token: recording one takes the token in the same transaction, under the request's row lock.
ALTER TABLE payment_requests ALTER COLUMN token DROP NOT NULL;
ALTER TABLE payment_requests ALTER COLUMN amount_due DROP NOT NULL;

-- At most 20 webhook endpoints per app (MAX_ENDPOINTS_PER_APP), held by the database: each insert takes
-- a slot in its app's count under that row's lock, so concurrent creates cannot pass the cap together;
-- an insert beyond it is skipped (INSERT … RETURNING gives no row: 409 too_many_webhooks). An app that
-- already had more keeps them; it adds again once below the cap.
CREATE TABLE webhook_endpoint_counts (
  app_id    text PRIMARY KEY,
  endpoints integer NOT NULL CHECK (endpoints >= 0)
);
INSERT INTO webhook_endpoint_counts (app_id, endpoints)
SELECT app_id, count(*) FROM webhook_endpoints GROUP BY app_id;

CREATE FUNCTION webhook_endpoints_take_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_endpoint_counts (app_id, endpoints) VALUES (NEW.app_id, 0) ON CONFLICT (app_id) DO NOTHING;
  UPDATE webhook_endpoint_counts SET endpoints = endpoints + 1 WHERE app_id = NEW.app_id AND endpoints < 20;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER webhook_endpoints_cap BEFORE INSERT ON webhook_endpoints
  FOR EACH ROW EXECUTE FUNCTION webhook_endpoints_take_slot();

CREATE FUNCTION webhook_endpoints_free_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE webhook_endpoint_counts SET endpoints = GREATEST(endpoints - 1, 0) WHERE app_id = OLD.app_id;
  RETURN OLD;
END;
$$;
CREATE TRIGGER webhook_endpoints_uncap AFTER DELETE ON webhook_endpoints
  FOR EACH ROW EXECUTE FUNCTION webhook_endpoints_free_slot();
