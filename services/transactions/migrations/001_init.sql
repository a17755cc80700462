CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  app_id       text NOT NULL,
  secret_hash  text NOT NULL,
  name         text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX api_keys_app_idx ON api_keys (app_id);

CREATE TABLE transactions (
  id               text PRIMARY KEY,
  app_id           text NOT NULL,
  type             text NOT NULL CHECK (type IN ('pay', 'sendTransaction')),
  reference        text NOT NULL,
  transaction_hash text,
  status           text NOT NULL CHECK (status IN ('pending', 'mined', 'failed')),
  from_address     text NOT NULL,
  to_address       text NOT NULL,
  chain            text NOT NULL,
  token            text NOT NULL,
  token_amount     numeric(78, 0) NOT NULL CHECK (token_amount >= 0),
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (app_id, reference)
);
CREATE INDEX transactions_watch_idx ON transactions (updated_at) WHERE status = 'pending' AND transaction_hash IS NOT NULL;

CREATE TABLE transaction_status_history (
  id             bigserial PRIMARY KEY,
  transaction_id text NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
  from_status    text,
  to_status      text NOT NULL,
  source         text NOT NULL,
  changed_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX transaction_status_history_tx_idx ON transaction_status_history (transaction_id, changed_at);
