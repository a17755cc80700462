-- USD → fiat exchange rates, for cross rates (token/USD × USD/fiat); history kept like quotes
CREATE TABLE fx_rates (
  id          bigserial PRIMARY KEY,
  fiat        text NOT NULL REFERENCES fiat_currencies (code),
  amount      numeric(78, 0) NOT NULL CHECK (amount > 0),
  decimals    integer NOT NULL CHECK (decimals BETWEEN 0 AND 36),
  source      text NOT NULL,
  observed_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fx_rates_latest_idx ON fx_rates (fiat, observed_at DESC, id DESC);
