import type QRCode from 'qrcode';

/**
 * qrcode (with pngjs, 58 modules, ~8.5 MB resident) at the first page that shows a code, not at start-up: every
 * process of pnpm start carries the transactions service (test/module-footprint.test.ts keeps it so).
 */
let qrcode: typeof QRCode | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at first use, synchronously
const loadQrcode = () => (qrcode ??= require('qrcode') as typeof QRCode);

/** The request as the page needs it: the app API's JSON with its links. */
export interface PageRequest {
  id: string;
  status: string;
  chain: string;
  to: string;
  token: string | null;
  accepted_tokens: { token: string; amount_due: string }[];
  amount_remaining: string | null;
  price: { amount: string; currency: string } | null;
  expires_at: string;
  return_url: string | null;
  payment_uri?: Record<string, string>;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** An amount with 6 decimals as a decimal number: 1500000 → 1.5. */
export const units = (amount: string) => {
  const n = BigInt(amount);
  const fraction = (n % 1000000n).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${n / 1000000n}.${fraction}` : `${n / 1000000n}`;
};

const PAID = ['paid', 'paid_over', 'paid_late'];
const FINAL = [...PAID, 'expired', 'canceled', 'failed', 'partially_refunded', 'refunded'];

/** The status as the page says it, and what the live update needs. */
export function pageStatus(r: PageRequest) {
  const text: Record<string, string> = {
    pending: 'Waiting for your payment',
    detected: 'Payment seen on the chain, waiting for it to be final',
    paid: 'Paid',
    paid_over: 'Paid',
    paid_late: 'Paid',
    underpaid: 'Underpaid',
    expired: 'Expired',
    canceled: 'Canceled',
    failed: 'Payment failed',
    partially_refunded: 'Paid, partly refunded',
    refunded: 'Refunded',
  };
  const remaining =
    r.status === 'underpaid' && r.amount_remaining !== null && r.token
      ? `${units(r.amount_remaining)} ${r.token} still due`
      : '';
  return {
    status: r.status,
    text: text[r.status] ?? r.status,
    remaining,
    paid: PAID.includes(r.status),
    final: FINAL.includes(r.status),
  };
}

/** QR codes drawn, by URI: a request's page is viewed again and again (and every few seconds without script). */
const QR_CACHE_MAX = 2000;
const qrCodes = new Map<string, Promise<string>>();

/** The QR code (SVG) of an EIP-681 URI, drawn once per URI while it is among the last QR_CACHE_MAX drawn. */
function qrSvg(uri: string): Promise<string> {
  let svg = qrCodes.get(uri);
  if (svg) return svg;
  svg = loadQrcode().toString(uri, { type: 'svg', margin: 4, errorCorrectionLevel: 'M', width: 240 });
  // a failed drawing is not kept
  svg.catch(() => qrCodes.delete(uri));
  qrCodes.set(uri, svg);
  if (qrCodes.size > QR_CACHE_MAX) qrCodes.delete(qrCodes.keys().next().value!);
  return svg;
}

/** One accepted token: its amount, the QR code of its EIP-681 URI (SVG, drawn here), the wallet link. */
async function tokenSection(r: PageRequest, token: string, amountDue: string): Promise<string> {
  const uri = r.payment_uri?.[token];
  const amount = `${units(amountDue)} ${esc(token)}`;
  if (!uri) return `<section class="token"><h2>${amount}</h2></section>`;
  const svg = await qrSvg(uri);
  return `<section class="token" aria-labelledby="pay-${esc(token)}">
<h2 id="pay-${esc(token)}">${amount}</h2>
<div class="qr" role="img" aria-label="QR code to pay ${amount} with a wallet" data-uri="${esc(uri)}">${svg}</div>
<p><a class="wallet" href="${esc(uri)}">Open in wallet to pay ${amount}</a></p>
</section>`;
}

/** The customer's page: everything is in the HTML (no script needed); the script only keeps it live. */
export async function pageHtml(r: PageRequest, appName: string | null): Promise<string> {
  const s = pageStatus(r);
  const who = appName ? esc(appName) : 'this order';
  // a request settled in one token is paid in that one; otherwise any accepted token
  const tokens = r.token ? r.accepted_tokens.filter((a) => a.token === r.token) : r.accepted_tokens;
  const sections = s.final ? [] : await Promise.all(tokens.map((a) => tokenSection(r, a.token, a.amount_due)));
  const expires = new Date(r.expires_at);
  const minutesLeft = Math.max(0, Math.ceil((expires.getTime() - Date.now()) / 60000));
  const back = s.paid && r.return_url ? `<p><a id="return" href="${esc(r.return_url)}">Return to ${who}</a></p>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay ${who}</title>
<link rel="stylesheet" href="/pay/assets/checkout.css">
</head>
<body>
<main id="checkout" data-request="${esc(r.id)}" data-return-url="${esc(r.return_url ?? '')}">
<h1>Pay ${who}</h1>
${r.price ? `<p class="fiat">${esc(r.price.amount)} ${esc(r.price.currency)}</p>` : ''}
<p>Status: <strong id="status" role="status" data-status="${esc(s.status)}">${esc(s.text)}</strong></p>
<p id="remaining">${esc(s.remaining)}</p>
${sections.join('\n')}
<p>Pay to <code id="to">${esc(r.to)}</code> on ${esc(r.chain)}.</p>
<p>Time left: <time id="expires" datetime="${esc(r.expires_at)}">${s.final ? 'none' : `about ${minutesLeft} min`}</time> (expires ${esc(expires.toISOString().slice(0, 16).replace('T', ' '))} UTC)</p>
${back}
<noscript><p>Reload this page to see the latest status.</p></noscript>
</main>
<script src="/pay/assets/checkout.js" defer></script>
</body>
</html>`;
}
