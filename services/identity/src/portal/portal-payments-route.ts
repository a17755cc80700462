import type { Request, Response, Router } from 'express';
import { AppError, endpoint } from '@attest/common';
import { frameOf, portalLocals, requireRole } from './portal-guard';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import {
  eventsPage,
  paymentRequestPage,
  paymentsPage,
  REQUEST_STATUSES,
  TRANSACTION_STATUSES,
  transactionPage,
} from './portal-payment-pages';
import { portalErrorPage } from './portal-pages';
import { checkedValue } from '../kernel/form-check';
import { PORTAL_EVENTS_QUERY, PORTAL_FORMS, PORTAL_PAYMENTS_QUERY } from './portal-forms';
import { portalPaymentDocs as docs } from './portal-payments-route.openapi';
import type { PortalGuardDeps, PortalServices } from './portal-deps';
import type { PortalForm } from './portal-notice';

const PAGE = 50;

/** What the payments pages use (read only): the guard's and the transactions admin API. */
export type PortalPaymentDeps = PortalGuardDeps & Pick<PortalServices, 'transactionsAdmin'>;

/**
 * An app's payments in the portal (issue 27), read only: its payment requests and transactions, searched
 * by reference and status, each with its payments, history, reason and amounts; and its events. The
 * transactions service's admin API answers, with the same services (and answers) as the app API's lists.
 */
export function portalPaymentRoutes(router: Router, deps: PortalPaymentDeps, form: PortalForm): void {
  const tx = deps.transactionsAdmin;
  const locals = (res: Response) => portalLocals(res) as { app: App; role: MemberRole };
  const unavailable = (req: Request, res: Response, err: unknown) => {
    if (!(err instanceof AppError)) throw err;
    portalErrorPage(res, err.status, frameOf(deps, req, res), 'Payments unavailable', err.detail);
  };
  const notFound = (req: Request, res: Response, what: string) =>
    portalErrorPage(res, 404, frameOf(deps, req, res), `No such ${what}`, `This app has no such ${what}.`);

  const list = async (req: Request, res: Response) => {
    const { app, role } = locals(res);
    const q = (name: string) => checkedValue(PORTAL_PAYMENTS_QUERY, req.query, name)?.trim() || undefined;
    const search = { reference: q('reference'), status: q('status') };
    const known = (statuses: readonly string[]) => !search.status || statuses.includes(search.status);
    try {
      const [requests, transactions] = await Promise.all([
        known(REQUEST_STATUSES)
          ? tx.paymentRequests(app.id, { ...search, cursor: q('requests_after'), limit: PAGE })
          : null,
        known(TRANSACTION_STATUSES)
          ? tx.transactions(app.id, { ...search, cursor: q('transactions_after'), limit: PAGE })
          : null,
      ]);
      const unknown = !known(REQUEST_STATUSES) && !known(TRANSACTION_STATUSES);
      paymentsPage(
        res,
        frameOf(deps, req, res, unknown ? { error: `There is no status “${search.status}”.` } : {}),
        {
          app,
          role,
          search,
          requests: requests && { data: requests.data, next: requests.next_cursor },
          transactions: transactions && { data: transactions.transactions, next: transactions.next_cursor },
        },
        unknown ? 400 : 200,
      );
    } catch (err) {
      if (err instanceof AppError && err.status === 400)
        return paymentsPage(
          res,
          frameOf(deps, req, res, { error: err.detail }),
          { app, role, search, requests: null, transactions: null },
          400,
        );
      unavailable(req, res, err);
    }
  };

  const request = async (req: Request, res: Response) => {
    const { app, role } = locals(res);
    const id = String(req.params.request_id);
    if (!/^pr_[0-9a-f]{32}$/.test(id)) return notFound(req, res, 'payment request');
    try {
      const found = await tx.paymentRequest(app.id, id);
      paymentRequestPage(res, frameOf(deps, req, res), { app, role, request: found });
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return notFound(req, res, 'payment request');
      unavailable(req, res, err);
    }
  };

  const transaction = async (req: Request, res: Response) => {
    const { app, role } = locals(res);
    const id = String(req.params.transaction_id).toLowerCase();
    if (!/^0x[0-9a-f]{64}$/.test(id)) return notFound(req, res, 'transaction');
    try {
      const found = await tx.transaction(id);
      // another app's transaction is "no such transaction" here
      if (found.app_id !== app.id) return notFound(req, res, 'transaction');
      transactionPage(res, frameOf(deps, req, res), { app, role, transaction: found });
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return notFound(req, res, 'transaction');
      unavailable(req, res, err);
    }
  };

  const events = async (req: Request, res: Response) => {
    const { app, role } = locals(res);
    const q = (name: string) => checkedValue(PORTAL_EVENTS_QUERY, req.query, name)?.trim() || undefined;
    const type = q('type');
    try {
      const page = await tx.events(app.id, { type, after: q('after'), limit: PAGE });
      eventsPage(res, frameOf(deps, req, res), { app, role, type, page });
    } catch (err) {
      if (err instanceof AppError && err.status === 400)
        return eventsPage(res, frameOf(deps, req, res, { error: err.detail }), { app, role, type, page: null }, 400);
      unavailable(req, res, err);
    }
  };

  const viewer = [...form(PORTAL_FORMS.appAction).slice(0, 2), requireRole(deps, 'viewer')];
  endpoint(router, '/portal/apps/:id/payments', { GET: [...viewer, list] }, docs.payments);
  endpoint(
    router,
    '/portal/apps/:id/payments/requests/:request_id',
    { GET: [...viewer, request] },
    docs.paymentRequest,
  );
  endpoint(
    router,
    '/portal/apps/:id/payments/transactions/:transaction_id',
    { GET: [...viewer, transaction] },
    docs.transaction,
  );
  endpoint(router, '/portal/apps/:id/events', { GET: [...viewer, events] }, docs.events);
}
