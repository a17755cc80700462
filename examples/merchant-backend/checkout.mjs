// A merchant backend's checkout with a payment request: the price is fixed in USD before the customer pays.
//   APP_ID=app_… API_KEY=api_… node examples/merchant-backend/checkout.mjs [REFERENCE]
// 1. creates the request priced in fiat (AMOUNT CURRENCY, default 12.50 USD, payable in any of TOKENS, a
//    comma-separated list, default WLD): Attest converts it at each token's current price from the prices
//    service and fixes each token's amount (accepted_tokens);
// 2. shows the customer what to pay (the amount in PAY_IN, default the first of TOKENS, and the address),
//    records the wallet's payment in that token naming the request (TX_HASH from the wallet; made up when
//    unset, as in check-payment.mjs): the request is settled in the token of its first payment;
// 3. re-reads the request until it is settled, and ships when it is paid (exactly, or short within the
//    app's underpayment tolerance) or paid_over. Exit code 0 shipped, 2 not shippable (underpaid, failed,
//    expired, paid_late), 3 still open after ATTEMPTS reads, 4 the transaction already pays another order,
//    5 no fresh price (try again later).
// Without a chain watcher, mark the payment mined meanwhile with:
//   pnpm --silent manage transaction set-status <transaction_id> mined
import crypto from 'node:crypto';

const API_URL = process.env.API_URL ?? 'http://localhost:4001';
const { APP_ID, API_KEY } = process.env;
const ATTEMPTS = Number(process.env.ATTEMPTS ?? 30);
const POLL_SECONDS = Number(process.env.POLL_SECONDS ?? 2);
const TOKENS = (process.env.TOKENS ?? process.env.TOKEN ?? 'WLD').split(',').map((t) => t.trim().toUpperCase());
const PAY_IN = (process.env.PAY_IN ?? TOKENS[0]).toUpperCase();
const AMOUNT = process.env.AMOUNT ?? '12.50';
const CURRENCY = process.env.CURRENCY ?? 'USD';
// the shop's address: one of the app's receiving addresses (an operator adds it: pnpm manage receiving-address add)
const PAY_TO = process.env.PAY_TO ?? '0x2222222222222222222222222222222222222222';
const reference = process.argv[2] ?? `order-${Date.now()}`;
if (!APP_ID || !API_KEY) {
  console.error('Set APP_ID and API_KEY (both printed by: pnpm --silent manage app create …)');
  process.exit(1);
}
const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
const log = (line) => console.log(JSON.stringify(line));
/** 6-decimal integer amounts as text: 5000000 → 5. */
const units = (amount) => `${Number(amount) / 1e6}`;

// The customer signed in to the shop; `from` comes from the session, never from the browser (see check-payment.mjs).
const session = { wallet: process.env.CUSTOMER_WALLET ?? '0x1111111111111111111111111111111111111111' };

// 1. The request: `reference` is the order id (the same body again answers the same request).
const created = await fetch(`${API_URL}/api/v2/client/payment-requests`, {
  method: 'POST',
  headers: auth,
  body: JSON.stringify({
    reference,
    chain: 'worldchain',
    accepted_tokens: TOKENS,
    to: PAY_TO,
    amount: AMOUNT,
    currency: CURRENCY,
  }),
});
if (created.status === 503) {
  // no fresh price: never an old rate; ask the customer to try again in a moment
  const error = await created.json();
  log({ event: 'no_price', code: error.code, detail: error.detail });
  process.exit(5);
}
if (created.status !== 201 && created.status !== 200)
  throw new Error(`creating the request failed: ${created.status} ${await created.text()}`);
const request = await created.json();
// 2. What the customer sees: the amount fixed now in the token they pay in, the address, the expiry
//    (accepted_tokens lists every token's amount: a checkout page may offer them all).
const payIn = request.accepted_tokens.find((a) => a.token === PAY_IN);
if (!payIn) throw new Error(`PAY_IN ${PAY_IN} is not one of the accepted tokens ${TOKENS.join(', ')}`);
log({
  event: 'request',
  id: request.id,
  reference,
  pay: `${units(payIn.amount_due)} ${payIn.token}`,
  amount_due: payIn.amount_due,
  accepted: request.accepted_tokens.map((a) => `${units(a.amount_due)} ${a.token}`),
  to: request.to,
  price: `${request.price.amount} ${request.price.currency}`,
  expires_at: request.expires_at,
});

// The wallet pays the amount due in its token to `to`; its payment is recorded naming the request.
const transactionHash = process.env.TX_HASH ?? `0x${crypto.randomBytes(32).toString('hex')}`;
const recorded = await fetch(`${API_URL}/api/v2/client/transaction`, {
  method: 'POST',
  headers: auth,
  body: JSON.stringify({
    app_id: APP_ID,
    type: 'pay',
    reference: `${reference}-payment-1`,
    transaction_hash: transactionHash,
    from: session.wallet,
    to: request.to,
    chain: request.chain,
    token: payIn.token,
    token_amount: payIn.amount_due,
    payment_request_id: request.id,
  }),
});
if (recorded.status === 409) {
  const error = await recorded.json();
  // transaction_already_claimed: the transfer pays another order; payment_token_mismatch: the request is
  // already being paid in another of its tokens (every payment toward it is in one token)
  if (error.code === 'transaction_already_claimed' || error.code === 'payment_token_mismatch') {
    log({ event: 'refused', reference, code: error.code, attribute: error.attribute });
    process.exit(4);
  }
  throw new Error(`recording failed: 409 ${JSON.stringify(error)}`);
}
if (recorded.status !== 201) throw new Error(`recording failed: ${recorded.status} ${await recorded.text()}`);
const { transaction_id: transactionId } = await recorded.json();
log({ event: 'recorded', transaction_id: transactionId, payment_request_id: request.id });

// 3. Re-read the request (a webhook says that it changed; the read is the truth) and decide.
const OPEN = ['pending', 'detected'];
for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
  const res = await fetch(`${API_URL}/api/v2/client/payment-requests/${request.id}`, { headers: auth });
  if (!res.ok) throw new Error(`reading the request failed: ${res.status} ${await res.text()}`);
  const r = await res.json();
  if (r.reference !== reference) throw new Error(`reference mismatch: ${r.reference}`);
  log({ event: 'status', attempt, status: r.status, reason: r.reason, amount_paid: r.amount_paid });
  if (OPEN.includes(r.status)) {
    await new Promise((resolve) => setTimeout(resolve, POLL_SECONDS * 1000));
    continue;
  }
  // paid: the whole amount, or short within the app's tolerance (reason underpaid_within_tolerance);
  // paid_over: more than due (refund the excess if you like)
  if (r.status === 'paid' || r.status === 'paid_over') {
    log({ event: 'ship', reference, paid: `${units(r.amount_paid)} ${r.token}`, status: r.status });
    process.exit(0);
  }
  // underpaid (ask for the rest or refund), failed, expired, paid_late (ship if you still honour it)
  log({ event: 'not_shipped', reference, status: r.status, reason: r.reason, detail: r.reason_detail });
  process.exit(2);
}
process.exit(3);
