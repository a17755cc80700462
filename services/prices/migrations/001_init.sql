CREATE TABLE tokens (
  code     text PRIMARY KEY CHECK (code = upper(code)),
  name     text NOT NULL,
  decimals integer NOT NULL CHECK (decimals BETWEEN 0 AND 36)
);

CREATE TABLE fiat_currencies (
  code        text PRIMARY KEY CHECK (code ~ '^[A-Z]{3}$'),
  name        text NOT NULL,
  symbol      text NOT NULL,
  minor_units integer
);

-- every observation is kept; the latest per pair is served (through the cache)
CREATE TABLE quotes (
  id          bigserial PRIMARY KEY,
  token       text NOT NULL REFERENCES tokens (code),
  fiat        text NOT NULL REFERENCES fiat_currencies (code),
  amount      numeric(78, 0) NOT NULL CHECK (amount >= 0),
  decimals    integer NOT NULL CHECK (decimals BETWEEN 0 AND 36),
  source      text NOT NULL,
  observed_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quotes_latest_idx ON quotes (token, fiat, observed_at DESC, id DESC);

INSERT INTO tokens (code, name, decimals) VALUES
  ('WLD', 'Worldcoin', 18),
  ('USDCE', 'Bridged USDC', 6),
  ('ETH', 'Ether', 18),
  ('WETH', 'Wrapped Ether', 18),
  ('USDC', 'USD Coin', 6);
