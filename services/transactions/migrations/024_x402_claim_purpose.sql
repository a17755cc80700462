-- Issue 43, "the same signed authorization sent twice (or to two sellers) settles once": a claim belongs to one
-- payment for one set of requirements. The same EIP-3009 authorization sent at once to two paid routes of one
-- seller (same payTo) moved once on chain, but the second settle found the claim and answered its success, so
-- the seller delivered two resources for one payment. The claim now keeps what was paid for:
--   resource          the resource's URL (PaymentPayload.resource.url in x402 v2), null when the payload named none;
--   requirements_hash hex SHA-256 of the canonical JSON of the seller's paymentRequirements (scheme, network,
--                     asset, payTo, amount, extra, which carries payment_request_id when there is one).
-- A settle of a claimed authorization answers the claim's outcome only when both are the same (a retry);
-- otherwise it is refused as an already-used authorization. Rows claimed before this migration have neither
-- (requirements_hash null): they answer their retries as before only while the authorization is still valid.
ALTER TABLE x402_settlements ADD COLUMN resource text, ADD COLUMN requirements_hash text;
-- The payment-identifier extension's id (payment_id, null when the buyer sent none) names one payment of the app:
-- two authorizations carrying the same id, settled at once, both passed the look for a recorded transaction and
-- both moved funds (the buyer charged twice for one id, the second payment unrecorded). The id is now claimed
-- with the authorization: while one claim with it is in flight or settled successfully, another authorization
-- with it is refused (payment_identifier_already_used) before anything is submitted. A failed settlement frees it.
ALTER TABLE x402_settlements ADD COLUMN payment_id text;
CREATE UNIQUE INDEX x402_settlements_payment_id_idx ON x402_settlements (app_id, payment_id)
  WHERE payment_id IS NOT NULL AND (outcome IS NULL OR outcome ->> 'success' = 'true');
