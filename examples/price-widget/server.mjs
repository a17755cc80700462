// A static page on its own origin that shows live prices with the Attest price widget.
//   node examples/price-widget/server.mjs        (then open http://localhost:3002)
import express from 'express';

const PRICES_URL = process.env.PRICES_URL ?? 'http://localhost:4002';
const PORT = Number(process.env.PORT ?? 3002);
const page = `<!doctype html>
<html lang="en-US">
<head><meta charset="utf-8"><title>Price widget example</title>
<script src="${PRICES_URL}/widget.js" defer></script>
<style>
  attest-price::part(change up) { color: #0a7d32; }
  attest-price::part(change down) { color: #b3261e; }
  attest-price::part(sparkline) { width: 8em; color: #5f6368; }
</style></head>
<body>
  <h1>WLD today</h1>
  <!-- live through the price stream (polling every 30 s if the stream is refused), with the 24 h change
       and a sparkline of the day; styled from outside through ::part() -->
  <p><attest-price id="wld" token="WLD" fiat="USD,EUR" refresh="30" change sparkline="24h"></attest-price></p>
  <p lang="de-DE"><attest-price id="usdce" token="USDCE" fiat="EUR" locale="de-DE" refresh="30"></attest-price></p>
</body>
</html>`;

express()
  .get('/', (_req, res) => res.type('html').send(page))
  .listen(PORT, () => console.log(`price-widget listening on http://localhost:${PORT}`));
