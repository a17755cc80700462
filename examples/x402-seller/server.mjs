// An x402 seller: an @x402/express server with one paid route, whose facilitator is Attest (the
// transactions service's /x402 endpoints, authenticated with the app's API key).
//   API_KEY=api_… PAY_TO=0x… ASSET=0x… node examples/x402-seller/server.mjs   → http://localhost:3004/report
// PAY_TO must be one of the app's receiving addresses on the chain; ASSET an EIP-3009 token of CHAIN_TOKENS.
// PRICE is in the token's base units (default 10000: 0.01 of a 6-decimal token); TOKEN_NAME and
// TOKEN_VERSION are its EIP-712 domain (default USD Coin, 2, as USDC's). The network is the one Attest
// supports (GET /x402/supported).
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';

const API_URL = process.env.API_URL ?? 'http://localhost:4001';
const PORT = Number(process.env.PORT ?? 3004);
const { API_KEY, PAY_TO, ASSET } = process.env;
if (!API_KEY || !PAY_TO || !ASSET) {
  console.error(
    'Set API_KEY (pnpm --silent manage api-key create …), PAY_TO (a receiving address of the app) and ASSET',
  );
  process.exit(1);
}

// 1. Attest as the facilitator: every verify and settle carries the app's API key, so the payments are the app's.
const auth = { Authorization: `Bearer ${API_KEY}` };
const facilitator = new HTTPFacilitatorClient({
  url: `${API_URL}/x402`,
  createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
});
const supported = await facilitator.getSupported();
const network = process.env.NETWORK ?? supported.kinds.find((k) => k.scheme === 'exact')?.network;
if (!network) {
  console.error('Attest supports no exact scheme: is CHAIN_RPC_URL set on the transactions service?');
  process.exit(1);
}

// 2. The paid route: an unpaid request gets 402 with what it costs; a paid one the report, and Attest
//    settles the payment on chain (and records it as the app's transaction: lookup and webhooks see it).
const resourceServer = new x402ResourceServer(facilitator).register(network, new ExactEvmScheme());
const app = express();
app.use(
  paymentMiddleware(
    {
      'GET /report': {
        accepts: {
          scheme: 'exact',
          network,
          payTo: PAY_TO,
          price: {
            amount: process.env.PRICE ?? '10000',
            asset: ASSET,
            // name/version: the token's EIP-712 domain; route: this route's own mark, so a payment made for
            // another paid route (same price and payTo) is never taken for a retry of this one's
            extra: {
              name: process.env.TOKEN_NAME ?? 'USD Coin',
              version: process.env.TOKEN_VERSION ?? '2',
              route: 'GET /report',
            },
          },
        },
        description: 'Today’s report',
        mimeType: 'application/json',
      },
    },
    resourceServer,
  ),
);
app.get('/report', (_req, res) => {
  res.json({ report: 'Paid for with x402, settled by Attest.', at: new Date().toISOString() });
});
app.listen(PORT, () => console.log(`x402 seller listening on http://localhost:${PORT}/report (${network})`));
