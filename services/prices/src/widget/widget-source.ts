/**
 * The price widget, served at GET /widget.js: a dependency-free custom element
 * `<attest-price token="WLD" fiat="USD,EUR" refresh="30" locale="de-DE">`. It reads the price API next to
 * the script (or the `api` attribute), formats each price with Intl.NumberFormat in the currency and
 * the page's (or the `locale` attribute's) locale, refreshes every `refresh` seconds with If-None-Match,
 * and shows "price unavailable" when the API cannot give a fresh price.
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
    ':host([data-state=unavailable]) [part=status]{color:#b00020}';

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
    static get observedAttributes() { return ['token', 'fiat', 'refresh', 'locale', 'api']; }

    constructor() {
      super();
      this.root = this.attachShadow({ mode: 'open' });
      this.etag = null;
      this.data = null;
      this.requested = null;
      this.timer = null;
    }

    connectedCallback() { this.load(); }
    disconnectedCallback() { clearTimeout(this.timer); this.timer = null; }
    attributeChangedCallback() { if (this.isConnected) this.load(); }

    url() {
      var url = new URL(this.getAttribute('api') || DEFAULT_API, document.baseURI);
      url.searchParams.set('cryptoCurrencies', list(this.getAttribute('token'), 'WLD')[0]);
      url.searchParams.set('fiatCurrencies', list(this.getAttribute('fiat'), 'USD').join(','));
      return url.href;
    }

    schedule() {
      clearTimeout(this.timer);
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
        .then(function () { self.schedule(); self.dispatchEvent(new CustomEvent('attest-price-update', { bubbles: true })); });
    }

    render() {
      var token = list(this.getAttribute('token'), 'WLD')[0];
      var locale = this.getAttribute('locale') || document.documentElement.lang || undefined;
      var prices = (this.data && this.data.result && this.data.result.prices && this.data.result.prices[token]) || {};
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
        } else {
          span.textContent = fiat + ' unavailable';
        }
        self.root.appendChild(span);
      });
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
