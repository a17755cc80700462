// An x402 buyer (an agent, say): @x402/fetch with a local wallet pays the seller's route and gets it.
//   BUYER_KEY=0x… ASSET=0x… node examples/x402-buyer/pay.mjs [URL]   (default http://localhost:3004/report)
// BUYER_KEY is the wallet's private key (it holds the token; it pays no gas: Attest's relayer does).
// The buyer pays only in ASSET and at most MAX_AMOUNT base units (default 10000) per request.
// Exit code 0 when the resource came, 2 when it did not.
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';

const url = process.argv[2] ?? 'http://localhost:3004/report';
const { BUYER_KEY, ASSET } = process.env;
if (!BUYER_KEY || !ASSET) {
  console.error('Set BUYER_KEY (the wallet’s private key) and ASSET (the token it pays in)');
  process.exit(1);
}
const wallet = privateKeyToAccount(BUYER_KEY);

// 1. What the seller asks: its 402 answer (an unpaid request first) names the network, the token and the amount.
const unpaid = await fetch(url);
if (unpaid.status !== 402) {
  console.error(`expected 402 from ${url}, got ${unpaid.status}`);
  process.exit(2);
}
const asked = decodePaymentRequiredHeader(unpaid.headers.get('PAYMENT-REQUIRED')).accepts;
const offer = asked.find((a) => a.scheme === 'exact' && a.asset.toLowerCase() === ASSET.toLowerCase());
if (!offer) {
  console.error(`the seller does not take ${ASSET}: ${JSON.stringify(asked)}`);
  process.exit(2);
}

// 2. A fetch that answers 402 by signing an EIP-3009 authorization and retrying; spend controls: this token only,
//    at most MAX_AMOUNT a request.
const pay = wrapFetchWithPaymentFromConfig(fetch, {
  schemes: [{ network: offer.network, client: new ExactEvmScheme(wallet) }],
  spendControls: {
    allowedAssets: [{ network: offer.network, asset: ASSET, maxAmountPerPayment: process.env.MAX_AMOUNT ?? '10000' }],
  },
});
const res = await pay(url);
if (res.status !== 200) {
  console.error(`not paid: ${res.status} ${await res.text()}`);
  process.exit(2);
}
const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE'));
console.log(JSON.stringify({ resource: await res.json(), payment: receipt }));
