-- Issue 43, "Proof of the human behind the agent" (the attest-human x402 extension): a seller may require that
-- an x402 payer be an agent acting for a verified person, shown by an Attest delegated access token. The
-- person is kept as the token names them: human_sub, their pairwise subject for the agent app (the token's
-- sub), and human_agent, that agent's client id (act.sub). Never an account id. Null for every other payment.
ALTER TABLE transactions ADD COLUMN human_sub text, ADD COLUMN human_agent text;
-- the claim keeps them too, so a settle that finishes another one's transaction records them
ALTER TABLE x402_settlements ADD COLUMN human_sub text, ADD COLUMN human_agent text;
