-- Issue 44: the customer's page (GET /pay/{payment_request_id}). The app's payment settings gain the name
-- the page shows and the https origins a request's return_url may point to (a JSON array); a request keeps
-- the return_url the app gave at creation (the page returns there once paid).
ALTER TABLE payment_amount_policies ADD COLUMN display_name text;
ALTER TABLE payment_amount_policies ADD COLUMN return_origins text NOT NULL DEFAULT '[]';
ALTER TABLE payment_requests ADD COLUMN return_url text;
