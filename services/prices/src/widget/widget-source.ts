/**
 * The price widget, served at GET /widget.js: a dependency-free custom element
 * `<attest-price token="WLD" fiat="USD,EUR" refresh="30" locale="de-DE" change sparkline="24h">`. It reads
 * the price API next to the script (or the `api` attribute), formats each price with Intl.NumberFormat in
 * the currency and the page's (or the `locale` attribute's) locale, and shows "price unavailable" when the
 * API cannot give a fresh price. It subscribes to the price stream (Server-Sent Events; `stream="off"` or a
 * URL) and falls back to polling every `refresh` seconds with If-None-Match when the stream is refused or
 * unavailable. `change` shows the 24 h change, `sparkline="24h|7d|30d"` a line of the history. Styled
 * from outside through ::part(label | price | change | sparkline | status).
 */
export const WIDGET_SOURCE = String.raw`/* Attest price widget: <attest-price token="WLD" fiat="USD,EUR" refresh="30"></attest-price> */
(function () {
  'use strict';
  if (customElements.get('attest-price')) return;
  var script = document.currentScript;
  var DEFAULT_API = script && script.src ? new URL('public/v1/miniapps/prices', script.src).href : '/public/v1/miniapps/prices';
  var STYLE =
    ':host{display:inline-flex;gap:.75em;align-items:baseline;font:inherit;color:inherit}' +
    '[part=price]{font-variant-numeric:tabular-nums}' +
    '[part=label]{opacity:.7}' +
    ':host([data-state=unavailable]) [part=status]{color:#b00020}' +
    '[part~=change]{font-size:.85em;font-variant-numeric:tabular-nums}' +
    '[part~=up]{color:#137333}[part~=down]{color:#b00020}' +
    '[part=sparkline]{width:6em;height:1.2em;align-self:center;overflow:visible}' +
    '[part=sparkline] polyline{fill:none;stroke:currentColor;stroke-width:1.5;vector-effect:non-scaling-stroke}';

  /** The stream or history URL beside the API URL (…/miniapps/prices or …/prices/latest/x → …/prices/<leaf>). */
  function sibling(apiUrl, leaf) {
    var url = new URL(apiUrl);
    var m = /^(.*)\/public\/v1\/(miniapps\/prices|prices\/latest\/[^/]+)$/.exec(url.pathname);
    if (!m) return null;
    return new URL(m[1] + '/public/v1/prices/' + leaf, url.origin);
  }

  function changeText(value, locale) {
    var n = Number(value);
    var text = new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2, signDisplay: 'exceptZero' }).format(n);
    return text + '\u00a0%';
  }

  function list(value, fallback) {
    return (value || fallback).split(',').map(function (s) { return s.trim().toUpperCase(); }).filter(Boolean);
  }

  /** amount x 10^-decimals, from the integer string the API gives. */
  function priceOf(entry) {
    return Number(entry.amount) / Math.pow(10, entry.decimals);
  }

  function format(value, fiat, locale) {
    var small = value !== 0 && Math.abs(value) < 1;
    try {
      return new Intl.NumberFormat(locale, { style: 'currency', currency: fiat, minimumFractionDigits: 2, maximumFractionDigits: small ? 4 : 2 }).format(value);
    } catch (e) {
      return new Intl.NumberFormat(locale, { maximumFractionDigits: 4 }).format(value) + ' ' + fiat;
    }
  }

  class AttestPrice extends HTMLElement {
    static get observedAttributes() { return ['token', 'fiat', 'refresh', 'locale', 'api', 'change', 'sparkline', 'stream']; }

    constructor() {
      super();
      this.root = this.attachShadow({ mode: 'open' });
      this.etag = null;
      this.data = null;
      this.requested = null;
      this.timer = null;
      this.source = null;
      this.streamed = null;
      this.points = null;
      this.historyEtag = null;
      this.historyAt = 0;
    }

    connectedCallback() { this.start(); }
    disconnectedCallback() { this.stop(); }
    attributeChangedCallback() { if (this.isConnected) this.start(); }

    stop() {
      clearTimeout(this.timer);
      this.timer = null;
      if (this.source) this.source.close();
      this.source = null;
    }

    /** Stream when it can, else poll; the first answer comes by whichever answers first. */
    start() {
      this.stop();
      this.points = null;
      this.historyEtag = null;
      this.historyAt = 0;
      var streamUrl = this.streamUrl();
      if (streamUrl && typeof EventSource === 'function') this.subscribe(streamUrl);
      else this.load();
    }

    query(url) {
      url.searchParams.set('cryptoCurrencies', list(this.getAttribute('token'), 'WLD')[0]);
      url.searchParams.set('fiatCurrencies', list(this.getAttribute('fiat'), 'USD').join(','));
      if (this.hasAttribute('change')) url.searchParams.set('change', 'true');
      return url.href;
    }

    url() {
      return this.query(new URL(this.getAttribute('api') || DEFAULT_API, document.baseURI));
    }

    streamUrl() {
      var attr = this.getAttribute('stream');
      if (attr === 'off') return null;
      var url = attr ? new URL(attr, document.baseURI) : sibling(new URL(this.getAttribute('api') || DEFAULT_API, document.baseURI).href, 'stream');
      return url ? this.query(url) : null;
    }

    subscribe(streamUrl) {
      var self = this;
      this.setAttribute('data-transport', 'stream');
      if (!this.data) this.setAttribute('data-state', 'loading');
      var source = new EventSource(streamUrl);
      this.source = source;
      source.addEventListener('price', function (e) {
        self.data = JSON.parse(e.data);
        self.render();
        self.updated();
      });
      source.addEventListener('unavailable', function () {
        self.data = null;
        self.renderUnavailable();
        self.updated();
      });
      source.onerror = function () {
        // refused (429, 503, an old server without the stream) or gone: poll instead; a dropped connection
        // that the browser is retrying (CONNECTING) keeps the stream
        if (source.readyState !== 2 || self.source !== source) return;
        self.source = null;
        self.setAttribute('data-transport', 'poll');
        self.load();
      };
    }

    updated() {
      this.loadHistory();
      this.dispatchEvent(new CustomEvent('attest-price-update', { bubbles: true }));
    }

    /** The sparkline's points, at most once a minute (If-None-Match), redrawn when they change. */
    loadHistory() {
      var range = this.getAttribute('sparkline');
      if (range === null || Date.now() - this.historyAt < 60000) return;
      var self = this;
      var base = sibling(new URL(this.getAttribute('api') || DEFAULT_API, document.baseURI).href, 'history/' + encodeURIComponent(list(this.getAttribute('token'), 'WLD')[0]));
      if (!base) return;
      base.searchParams.set('fiat', list(this.getAttribute('fiat'), 'USD')[0]);
      base.searchParams.set('range', range || '24h');
      this.historyAt = Date.now();
      var headers = this.historyEtag ? { 'If-None-Match': this.historyEtag } : {};
      fetch(base.href, { headers: headers, cache: 'no-cache', credentials: 'omit' })
        .then(function (res) {
          if (res.status === 304) return null;
          if (!res.ok) throw new Error('HTTP ' + res.status);
          self.historyEtag = res.headers.get('ETag');
          return res.json();
        })
        .then(function (body) {
          if (!body) return;
          self.points = body.result.points.map(priceOf);
          if (self.getAttribute('data-state') === 'ready') self.render();
          self.dispatchEvent(new CustomEvent('attest-price-sparkline', { bubbles: true }));
        })
        .catch(function () { self.historyAt = 0; });
    }

    sparkline() {
      var values = this.points || [];
      var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
      svg.setAttribute('part', 'sparkline');
      svg.setAttribute('viewBox', '0 0 100 20');
      svg.setAttribute('preserveAspectRatio', 'none');
      svg.setAttribute('role', 'img');
      svg.setAttribute('data-points', String(values.length));
      svg.setAttribute('aria-label', (this.getAttribute('sparkline') || '24h') + ' price history');
      if (values.length > 1) {
        var min = Math.min.apply(null, values);
        var max = Math.max.apply(null, values);
        var line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
        line.setAttribute('points', values.map(function (v, i) {
          var x = (i / (values.length - 1)) * 100;
          var y = max === min ? 10 : 20 - ((v - min) / (max - min)) * 20;
          return x.toFixed(2) + ',' + y.toFixed(2);
        }).join(' '));
        svg.appendChild(line);
      }
      return svg;
    }

    schedule() {
      clearTimeout(this.timer);
      if (this.source) return;
      var seconds = Number(this.getAttribute('refresh') || 60);
      if (seconds > 0 && this.isConnected) this.timer = setTimeout(this.load.bind(this), Math.max(seconds, 5) * 1000);
    }

    load() {
      var self = this;
      var url = this.url();
      if (url !== this.requested) { this.etag = null; this.data = null; this.requested = url; }
      if (!this.data) this.setAttribute('data-state', 'loading');
      var headers = this.etag ? { 'If-None-Match': this.etag } : {};
      return fetch(url, { headers: headers, cache: 'no-cache', credentials: 'omit' })
        .then(function (res) {
          if (res.status === 304 && self.data) return self.data;
          if (!res.ok) throw new Error('HTTP ' + res.status);
          self.etag = res.headers.get('ETag');
          return res.json();
        })
        .then(function (data) { self.data = data; self.render(); })
        .catch(function () { self.data = null; self.etag = null; self.renderUnavailable(); })
        .then(function () { self.schedule(); self.updated(); });
    }

    render() {
      var token = list(this.getAttribute('token'), 'WLD')[0];
      var locale = this.getAttribute('locale') || document.documentElement.lang || undefined;
      var result = (this.data && this.data.result) || {};
      var prices = (result.prices && result.prices[token]) || {};
      var changes = (result.change && result.change[token]) || {};
      var observed = (result.observed_at && result.observed_at[token]) || {};
      var parts = ['<style>' + STYLE + '</style>', '<span part="label"></span>'];
      this.root.innerHTML = parts.join('');
      this.root.querySelector('[part=label]').textContent = token;
      var self = this;
      list(this.getAttribute('fiat'), 'USD').forEach(function (fiat) {
        var entry = prices[fiat];
        var span = document.createElement('span');
        span.setAttribute('part', 'price');
        span.setAttribute('data-fiat', fiat);
        if (entry) {
          span.setAttribute('data-amount', entry.amount);
          span.setAttribute('data-decimals', String(entry.decimals));
          span.textContent = format(priceOf(entry), fiat, locale);
          if (observed[fiat]) span.title = 'as of ' + new Date(observed[fiat]).toLocaleString(locale);
        } else {
          span.textContent = fiat + ' unavailable';
        }
        self.root.appendChild(span);
        var change = changes[fiat] && changes[fiat]['24h'];
        if (self.hasAttribute('change') && change !== undefined) {
          var c = document.createElement('span');
          var n = Number(change);
          c.setAttribute('part', 'change' + (n > 0 ? ' up' : n < 0 ? ' down' : ''));
          c.setAttribute('data-fiat', fiat);
          c.setAttribute('data-change', change);
          c.title = '24 h change';
          c.textContent = changeText(change, locale);
          self.root.appendChild(c);
        }
      });
      if (this.hasAttribute('sparkline')) this.root.appendChild(this.sparkline());
      this.setAttribute('data-state', 'ready');
    }

    renderUnavailable() {
      var token = list(this.getAttribute('token'), 'WLD')[0];
      this.root.innerHTML = '<style>' + STYLE + '</style><span part="label"></span><span part="status" role="status"></span>';
      this.root.querySelector('[part=label]').textContent = token;
      this.root.querySelector('[part=status]').textContent = 'price unavailable';
      this.setAttribute('data-state', 'unavailable');
    }
  }

  customElements.define('attest-price', AttestPrice);
})();
`;
