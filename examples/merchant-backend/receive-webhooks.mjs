// A merchant backend's webhook receiver: Attest tells it when its payments change.
//   WEBHOOK_SECRET=whsec_… APP_ID=app_… API_KEY=api_… node examples/merchant-backend/receive-webhooks.mjs
// Register it first (the answer carries the secret, shown once):
//   pnpm --silent manage webhook add --app-id app_… --url http://127.0.0.1:3003/webhooks/attest
// Each request is checked as Standard Webhooks says (signature over id, timestamp and the exact body;
// a timestamp at most 5 minutes old), handled once per webhook-id, and then the backend asks the lookup
// API how the transaction stands (or re-reads the payment request, for payment_request.* events): the
// webhook says that something changed, the read is the truth. It prints one JSON line per event; "ship"
// when a payment it has not shipped yet is mined, or a payment request is paid or paid_over.
// No dependencies: node:crypto does the check (any Standard Webhooks library does the same).
import crypto from 'node:crypto';
import http from 'node:http';

const API_URL = process.env.API_URL ?? 'http://localhost:4001';
const PORT = Number(process.env.PORT ?? 3003);
const { WEBHOOK_SECRET, APP_ID, API_KEY } = process.env;
if (!WEBHOOK_SECRET?.startsWith('whsec_') || !APP_ID || !API_KEY) {
  console.error('Set WEBHOOK_SECRET (whsec_…, from pnpm manage webhook add), APP_ID and API_KEY');
  process.exit(1);
}
const key = Buffer.from(WEBHOOK_SECRET.slice('whsec_'.length), 'base64');
const TOLERANCE_SECONDS = 5 * 60;

const handled = new Set(); // in production: a table with a unique key on webhook-id
const shipped = new Set(); // in production: your orders table

/** Whether one of the signatures (space-separated `v1,<base64>`) is ours over id.timestamp.body. */
function verified(headers, body) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = crypto.createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  return signatures.split(' ').some((signature) => {
    const [version, value] = signature.split(',');
    const given = Buffer.from(value ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

async function lookup(transactionId, type) {
  const url = `${API_URL}/api/v2/client/transaction/${transactionId}?app_id=${encodeURIComponent(APP_ID)}&type=${type}`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${API_KEY}` } });
  if (!res.ok) throw new Error(`lookup failed: ${res.status}`);
  return res.json();
}

async function readRequest(requestId) {
  const res = await fetch(`${API_URL}/api/v2/client/payment-requests/${requestId}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  if (!res.ok) throw new Error(`reading the payment request failed: ${res.status}`);
  return res.json();
}

/** Whether the recorded payment names a payment request: then the request decides (its own events), not the payment. */
async function paysARequest(reference) {
  const res = await fetch(`${API_URL}/api/v2/client/transactions?reference=${encodeURIComponent(reference)}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  if (!res.ok) throw new Error(`listing the payment failed: ${res.status}`);
  const { data } = await res.json();
  return data.some((t) => t.payment_request_id);
}

async function handle(req, res, body) {
  // the signature covers the exact bytes sent: check it before parsing anything
  if (!verified(req.headers, body)) return res.writeHead(400).end(); // not from Attest, or too old
  const id = req.headers['webhook-id'];
  if (handled.has(id)) return res.writeHead(204).end(); // a retry, redelivery or replay of a handled event
  const event = JSON.parse(body.toString('utf8'));
  console.log(JSON.stringify({ event: 'webhook', webhook_id: id, type: event.type, reference: event.data.reference }));
  if (event.type.startsWith('payment_request.')) {
    // a payment request (checkout.mjs): its payload carries the state, amounts and reason, but the
    // backend re-reads the request and ships on what the read says
    const request = await readRequest(event.data.id);
    if (['paid', 'paid_over'].includes(request.status) && !shipped.has(request.reference)) {
      shipped.add(request.reference);
      console.log(JSON.stringify({ event: 'ship', reference: request.reference, status: request.status }));
    } else if (!['pending', 'detected', 'paid', 'paid_over'].includes(request.status))
      console.log(
        JSON.stringify({
          event: 'not_shipped',
          reference: request.reference,
          status: request.status,
          reason: request.reason,
        }),
      );
  } else if (event.data.transaction_id) {
    // a recorded payment (check-payment.mjs), looked up as type=pay
    const transaction = await lookup(event.data.transaction_id, 'pay');
    if (
      transaction.transaction_status === 'mined' &&
      !shipped.has(transaction.reference) &&
      !(await paysARequest(transaction.reference))
    ) {
      shipped.add(transaction.reference);
      console.log(JSON.stringify({ event: 'ship', reference: transaction.reference }));
    }
  }
  handled.add(id);
  res.writeHead(204).end();
}

http
  .createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/webhooks/attest') return res.writeHead(404).end();
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () =>
      handle(req, res, Buffer.concat(chunks)).catch((err) => {
        console.error(err.message);
        res.writeHead(503).end(); // Attest tries again later
      }),
    );
  })
  .listen(PORT, '127.0.0.1', () => console.log(JSON.stringify({ event: 'listening', port: PORT })));
