// A merchant backend: records a payment, then checks it with the lookup API before "shipping".
//   APP_ID=app_… API_KEY=api_… node examples/merchant-backend/check-payment.mjs [REFERENCE]
// It polls while the payment is pending (every POLL_SECONDS, at most ATTEMPTS times); exit code 0 when
// mined, 2 when failed, 3 when still pending, 4 when another order already claimed the transaction.
// CUSTOMER_WALLET is the wallet of the customer signed in to the shop. PAY_TO is the shop's address: one of
// the app's receiving addresses (an operator adds it first: pnpm --silent manage receiving-address add
// --app-id … --chain worldchain --address …). Mark the payment mined meanwhile with:
//   pnpm --silent manage transaction set-status <transaction_id> mined
import crypto from 'node:crypto';

const API_URL = process.env.API_URL ?? 'http://localhost:4001';
const { APP_ID, API_KEY } = process.env;
const ATTEMPTS = Number(process.env.ATTEMPTS ?? 30);
const POLL_SECONDS = Number(process.env.POLL_SECONDS ?? 2);
const reference = process.argv[2] ?? `order-${Date.now()}`;
if (!APP_ID || !API_KEY) {
  console.error('Set APP_ID and API_KEY (both printed by: pnpm --silent manage app create …)');
  process.exit(1);
}

// 0. Who pays: the customer signed in to your shop. `from` comes from YOUR session (the wallet you
//    stored for this user when she signed in), never from the browser's request: Attest marks a
//    payment mined when the chain holds a transfer from `from` to `to` of the amount, and transfers are
//    public, so a customer who could choose `from` could claim a stranger's payment of the right amount
//    to your shop as her own. Here the session is this one customer's.
const session = {
  user: 'customer-1',
  wallet: process.env.CUSTOMER_WALLET ?? '0x1111111111111111111111111111111111111111',
};

// 1. The payment. The user's wallet makes it; the backend records it with the app's API key (the
//    same reference again with the same values answers the same transaction). TX_HASH is the
//    transaction's hash from the wallet; without one, this example makes up a hash, which no chain
//    knows: with a chain watcher configured it would fail as dropped, without one it stays pending
//    until an operator sets its status. One on-chain transaction pays one order: a hash another
//    order (of any app) already recorded is refused with 409 transaction_already_claimed.
const transactionHash = process.env.TX_HASH ?? `0x${crypto.randomBytes(32).toString('hex')}`;
const recorded = await fetch(`${API_URL}/api/v2/client/transaction`, {
  method: 'POST',
  headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
  body: JSON.stringify({
    app_id: APP_ID,
    type: 'pay',
    reference,
    transaction_hash: transactionHash,
    from: session.wallet, // bound to the signed-in customer, not taken from the request
    to: process.env.PAY_TO ?? '0x2222222222222222222222222222222222222222', // the shop's receiving address
    chain: 'worldchain',
    token: 'USDCE',
    token_amount: '1500000', // 1.5 USDCE: amounts are integers with 6 decimals
  }),
});
if (recorded.status === 409) {
  const error = await recorded.json();
  if (error.code === 'transaction_already_claimed') {
    // this transaction already pays another order: do not ship this one
    console.log(JSON.stringify({ event: 'refused', reference, code: error.code, attribute: error.attribute }));
    process.exit(4);
  }
  throw new Error(`recording failed: 409 ${JSON.stringify(error)}`);
}
if (recorded.status === 403) {
  const error = await recorded.json();
  if (error.code === 'receiving_address_not_registered') {
    // PAY_TO is not one of this app's receiving addresses: add it first (pnpm manage receiving-address add)
    console.log(JSON.stringify({ event: 'refused', reference, code: error.code, attribute: error.attribute }));
    process.exit(5);
  }
  throw new Error(`recording failed: 403 ${JSON.stringify(error)}`);
}
if (recorded.status !== 201) throw new Error(`recording failed: ${recorded.status} ${await recorded.text()}`);
const { transaction_id: transactionId, from } = await recorded.json();
console.log(JSON.stringify({ event: 'recorded', transaction_id: transactionId, reference, from }));

// 2. The check a merchant backend makes before it ships: with the app's API key, compare the reference,
//    read transaction_status; retry while pending.
async function lookup() {
  const url = `${API_URL}/api/v2/client/transaction/${transactionId}?app_id=${encodeURIComponent(APP_ID)}&type=pay`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${API_KEY}` } });
  if (!res.ok) throw new Error(`lookup failed: ${res.status} ${await res.text()}`);
  return res.json();
}

for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
  const tx = await lookup();
  if (tx.reference !== reference) throw new Error(`reference mismatch: ${tx.reference}`);
  console.log(
    JSON.stringify({
      event: 'status',
      attempt,
      transaction_status: tx.transaction_status,
      token_amount: tx.token_amount,
      token: tx.token,
    }),
  );
  if (tx.transaction_status === 'mined') {
    console.log(JSON.stringify({ event: 'paid', amount: `${Number(tx.token_amount) / 1e6} ${tx.token}` }));
    process.exit(0);
  }
  if (tx.transaction_status === 'failed') process.exit(2);
  await new Promise((resolve) => setTimeout(resolve, POLL_SECONDS * 1000));
}
process.exit(3);
