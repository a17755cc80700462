-- Issue 40, item 1: the addresses an app receives payments at, per chain. One app per (chain, address): an
-- app's API key may record a payment, attach one to a payment request, or create a payment request only to
-- one of its own receiving addresses, and the chain watcher attaches a transfer nobody recorded only to a
-- request of the app that holds its recipient. An operator adds one (`pnpm manage receiving-address add`,
-- the admin API), or the app proves it holds the address by signing a challenge (EIP-191, or EIP-1271 for a
-- contract). Addresses are kept lower case; chains as CHAIN_TOKENS names them.
CREATE TABLE receiving_addresses (
  chain      text NOT NULL,
  address    text NOT NULL CHECK (address ~ '^0x[0-9a-f]{40}$'),
  app_id     text NOT NULL,
  -- how it was added: by an operator, or proven by a signature (eip191: an account; eip1271: a contract)
  proof      text NOT NULL CHECK (proof IN ('operator', 'eip191', 'eip1271')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain, address)
);
CREATE INDEX receiving_addresses_app_idx ON receiving_addresses (app_id, chain, address);

-- The challenges an app asked to sign: bound to the app, chain and address, used once (deleted as a proof
-- is tried), refused after expires_at.
CREATE TABLE receiving_address_challenges (
  id         text PRIMARY KEY,
  app_id     text NOT NULL,
  chain      text NOT NULL,
  address    text NOT NULL,
  message    text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX receiving_address_challenges_expiry_idx ON receiving_address_challenges (expires_at);
