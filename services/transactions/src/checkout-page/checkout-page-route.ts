import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import {
  AppError,
  clientAddress,
  endpoint,
  errorResponse,
  errors,
  htmlResponse,
  textResponse,
  validate,
  type InvalidationBus,
} from '@attest/common';
import type { PaymentPolicyService, PaymentRequestService } from '../payment-requests';
import { CHECKOUT_CSS, CHECKOUT_JS } from './assets';
import { pageHtml, pageStatus, type PageRequest } from './page-html';

/** The topic every change of a payment request is published on after its commit (its read cache's). */
const REQUEST_CHANGES = 'cache:payment-requests';
/** Open status streams per replica: beyond it, 503 (the page still works, without the live update). */
const MAX_STREAMS = 2000;
/** Open status streams from one address per replica: beyond it, 429 (a customer has one page open, or a few). */
const MAX_STREAMS_PER_ADDRESS = 20;
const HEARTBEAT_MS = 15000;

/** No script but /pay/assets/, no inline script or style; the page talks to its own origin only. */
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

export interface CheckoutPageDeps {
  paymentRequests: Pick<PaymentRequestService, 'read'>;
  policies: Pick<PaymentPolicyService, 'policy'>;
  bus: InvalidationBus;
}

const idParams = Joi.object({
  payment_request_id: Joi.string()
    .pattern(/^pr_[0-9a-f]{32}$/)
    .required()
    .messages({ 'string.pattern.base': 'payment_request_id must be pr_ followed by 32 hexadecimal digits.' }),
});

/**
 * The customer's page of a payment request, GET /pay/{payment_request_id} (public: the id is unguessable),
 * its live status as Server-Sent Events, and its script and stylesheet.
 */
export function checkoutPageRoute(router: Router, deps: CheckoutPageDeps): void {
  const load = async (req: Request) => {
    const { payment_request_id: id } = validate(idParams, { payment_request_id: req.params.payment_request_id });
    const found = await deps.paymentRequests.read(id as string);
    if (!found) throw errors.notFound('No payment request with this id.', 'payment_request_id');
    return found;
  };

  const page = async (req: Request, res: Response) => {
    const { appId, view } = await load(req);
    const { displayName } = await deps.policies.policy(appId);
    res
      .status(200)
      .set({
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': 'no-store',
        'Content-Security-Policy': PAGE_CSP,
        'Referrer-Policy': 'no-referrer',
        'X-Content-Type-Options': 'nosniff',
      })
      .send(await pageHtml(view as PageRequest, displayName));
  };

  let streams = 0;
  const perAddress = new Map<string, number>();
  const stream = async (req: Request, res: Response) => {
    const address = clientAddress(req);
    if ((perAddress.get(address) ?? 0) >= MAX_STREAMS_PER_ADDRESS)
      throw new AppError(
        'too_many_requests',
        429,
        `At most ${MAX_STREAMS_PER_ADDRESS} payment status streams may be open from one address; close a page.`,
        null,
        { headers: { 'Retry-After': '30' } },
      );
    if (streams >= MAX_STREAMS) throw errors.unavailable('payment page status stream');
    // the slot is taken, and given back on close, before the read: a client gone meanwhile keeps nothing
    streams++;
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    let closed = false;
    const cleanups: (() => void)[] = [];
    const release = () => {
      if (closed) return;
      closed = true;
      streams--;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left) perAddress.set(address, left);
      else perAddress.delete(address);
      for (const cleanup of cleanups) cleanup();
    };
    res.on('close', release);
    let view: PageRequest;
    try {
      view = (await load(req)).view as PageRequest;
    } catch (err) {
      release();
      throw err;
    }
    if (closed || res.destroyed) return release();
    const id = view.id;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 3000\n\n');
    let last = '';
    const send = (r: PageRequest) => {
      const data = JSON.stringify(pageStatus(r));
      if (data === last) return;
      last = data;
      res.write(`event: status\ndata: ${data}\n\n`);
    };
    send(view);
    let reading = Promise.resolve();
    // re-read after the change's commit (the read cache drops the request on the same message first)
    const again = () => {
      reading = reading.then(async () => {
        const now = await deps.paymentRequests.read(id).catch(() => null);
        if (now && !res.writableEnded) send(now.view as PageRequest);
      });
    };
    const unsubscribe = deps.bus.subscribe(REQUEST_CHANGES, (changed) => {
      if (changed === id) setImmediate(again);
    });
    // a heartbeat, which also re-reads (a pending request past its expiry is expired when read)
    const heartbeat = setInterval(() => {
      res.write(': heartbeat\n\n');
      again();
    }, HEARTBEAT_MS);
    cleanups.push(() => clearInterval(heartbeat), unsubscribe);
    req.socket.setTimeout(0);
  };

  const asset = (body: string, type: string) => (_req: Request, res: Response) => {
    res.set({ 'Content-Type': type, 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' });
    res.send(body);
  };

  endpoint(
    router,
    '/pay/assets/checkout.js',
    { GET: [asset(CHECKOUT_JS, 'text/javascript; charset=utf-8')] },
    {
      GET: {
        summary: 'The payment page’s script (the live status and time left)',
        tags: ['payment page'],
        responses: { 200: textResponse('The script', 'text/javascript') },
      },
    },
  );
  endpoint(
    router,
    '/pay/assets/checkout.css',
    { GET: [asset(CHECKOUT_CSS, 'text/css; charset=utf-8')] },
    {
      GET: {
        summary: 'The payment page’s stylesheet',
        tags: ['payment page'],
        responses: { 200: textResponse('The stylesheet', 'text/css') },
      },
    },
  );
  endpoint(
    router,
    '/pay/:payment_request_id',
    { GET: [page] },
    {
      GET: {
        summary: 'The customer’s payment page of a payment request (public; the id is unguessable)',
        description:
          'The app’s name (display_name of its payment policy), the price, each accepted token’s amount with a QR code of its ' +
          'EIP-681 URI and an "open in wallet" link, the receiving address, the time left and the status; once paid, a link back ' +
          'to the request’s return_url. Works without script; its script (no inline script, CSP) keeps the status live from ' +
          '/pay/{payment_request_id}/events and goes to return_url once paid.',
        tags: ['payment page'],
        params: idParams,
        responses: {
          200: htmlResponse('The page'),
          400: errorResponse('invalid_parameter: payment_request_id is not pr_ and 32 hexadecimal digits'),
          404: errorResponse('not_found: no payment request with this id'),
        },
      },
    },
  );
  endpoint(
    router,
    '/pay/:payment_request_id/events',
    { GET: [stream] },
    {
      GET: {
        summary: 'The payment page’s live status as Server-Sent Events',
        description:
          '`event: status` with `{status, text, remaining, paid, final}`, sent at once and after every change of the request ' +
          '(the same change that writes its payment_request.* webhook event), and a `: heartbeat` comment every 15 s.',
        tags: ['payment page'],
        params: idParams,
        responses: {
          200: {
            description: 'text/event-stream: event status, data',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          400: errorResponse('invalid_parameter: payment_request_id is not pr_ and 32 hexadecimal digits'),
          404: errorResponse('not_found: no payment request with this id'),
          503: errorResponse('service_unavailable: too many status streams are open on this replica'),
        },
      },
    },
  );
}
