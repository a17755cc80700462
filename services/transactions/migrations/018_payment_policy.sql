-- Issue 44: the app's payment policy, readable and settable with its API key (GET/PUT
-- /api/v2/client/payment-policy) as by the operator: the default expiry of the payment requests it creates
-- without expires_in joins the underpayment tolerance and the overpayment handling.
ALTER TABLE payment_amount_policies ADD COLUMN default_expires_in_seconds integer NOT NULL DEFAULT 900
  CHECK (default_expires_in_seconds BETWEEN 60 AND 86400);
