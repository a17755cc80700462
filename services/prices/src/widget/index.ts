// Widget: GET /widget.js, the <attest-price> web component.
export { widgetRoute } from './widget-route';
