/**
 * The customer's checkout page: GET /pay/{payment_request_id} (amounts, QR codes of EIP-681 URIs, live
 * status by Server-Sent Events, return to the app once paid), and the links each payment request's JSON
 * carries (payment_url, payment_uri). Needs: the kernel and payment-requests.
 */
export { checkoutPageRoute, type CheckoutPageDeps } from './checkout-page-route';
export { checkoutLinks, paymentUri, type CheckoutLinks } from './payment-uri';
