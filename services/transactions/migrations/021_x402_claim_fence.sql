-- A review finding (issue 43): a claim could be taken over while its settle still waited for the relayer's
-- lock (held longer than the claim's lease by other settlements), and both then submitted: the second
-- transaction reverted on chain and cost the relayer gas. Each claim now carries a fencing token: taking
-- a claim over increases it, and a settle stores its transaction hash (under the relayer's lock, before
-- broadcasting) only while the claim still carries its token; one that lost its claim submits nothing.
ALTER TABLE x402_settlements ADD COLUMN fence bigint NOT NULL DEFAULT 1;
