/**
 * The page's static assets (served from /pay/assets/, no inline script or style: the page's CSP allows
 * 'self' only). The script keeps the page live: the time left, and the status from the request's
 * Server-Sent Events; once paid it goes to the return_url the app gave.
 */
export const CHECKOUT_JS = `(function () {
  var main = document.getElementById('checkout');
  if (!main) return;
  var id = main.getAttribute('data-request');
  var back = main.getAttribute('data-return-url');
  var status = document.getElementById('status');
  var remaining = document.getElementById('remaining');
  var expires = document.getElementById('expires');
  function tick() {
    var left = Date.parse(expires.getAttribute('datetime')) - Date.now();
    expires.textContent = left > 0 ? Math.floor(left / 60000) + ' min ' + Math.floor((left % 60000) / 1000) + ' s' : 'none';
  }
  var timer = null;
  if (expires && status.getAttribute('data-status') === 'pending') { tick(); timer = setInterval(tick, 1000); }
  if (!window.EventSource) return;
  var events = new EventSource('/pay/' + encodeURIComponent(id) + '/events');
  events.addEventListener('status', function (e) {
    var s = JSON.parse(e.data);
    status.textContent = s.text;
    status.setAttribute('data-status', s.status);
    remaining.textContent = s.remaining;
    if (s.final) {
      events.close();
      if (timer) clearInterval(timer);
      var qrs = document.querySelectorAll('.token');
      for (var i = 0; i < qrs.length; i++) qrs[i].hidden = true;
    }
    if (s.paid && back) window.location.assign(back);
  });
})();
`;

export const CHECKOUT_CSS = `body { font-family: system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #111; }
main { max-width: 28rem; margin: 2rem auto; padding: 1.5rem; background: #fff; border-radius: 8px; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; }
.fiat { font-size: 1.6rem; font-weight: 600; }
.qr svg { width: 240px; height: 240px; display: block; }
code { word-break: break-all; }
a.wallet { display: inline-block; padding: 0.6rem 1rem; background: #0b57d0; color: #fff; border-radius: 6px; text-decoration: none; }
`;
