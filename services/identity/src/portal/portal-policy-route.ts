import type { Request, Response, Router } from 'express';
import { AppError, endpoint, type EndpointDocs } from '@attest/common';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import { checkedValue } from '../kernel/form-check';
import { frameOf, portalActor, portalLocals, requireRole } from './portal-guard';
import type { PortalDeps, PortalGuardDeps, PortalServices } from './portal-deps';
import type { PortalForm } from './portal-notice';
import { PORTAL_POLICY_FORMS } from './portal-policy-forms';
import { policyPage, type PolicyAsked } from './portal-policy-page';
import { portalPolicyDocs as docs } from './portal-policy-route.openapi';
import type { PaymentPolicyFields, PaymentPolicyView } from './transactions-admin';

/** What the payment policy page uses: the guard's, the audit trail, the transactions admin API. */
export type PortalPolicyDeps = PortalGuardDeps & Pick<PortalDeps, 'audit'> & Pick<PortalServices, 'transactionsAdmin'>;

const FIELDS = [
  'underpayment_tolerance_percent',
  'flag_overpayment',
  'default_expires_in',
  'display_name',
  'return_origins',
] as const;

/** The form as the transactions admin API takes it: an empty name is none, the origins one a line. */
function policyFields(asked: PolicyAsked): PaymentPolicyFields {
  const fields: PaymentPolicyFields = {};
  if (asked.underpayment_tolerance_percent !== undefined)
    fields.underpayment_tolerance_percent = asked.underpayment_tolerance_percent.trim();
  if (asked.flag_overpayment !== undefined) fields.flag_overpayment = asked.flag_overpayment === 'true';
  if (asked.default_expires_in !== undefined) fields.default_expires_in = asked.default_expires_in.trim();
  if (asked.display_name !== undefined) fields.display_name = asked.display_name.trim() || null;
  if (asked.return_origins !== undefined)
    fields.return_origins = asked.return_origins
      .split(/\r?\n/)
      .map((o) => o.trim())
      .filter((o) => o !== '');
  return fields;
}

/**
 * An app's payment policy in the portal (issue 44): members read it; an owner sets it. It lives in the
 * transactions service (GET/PUT /admin/apps/{app_id}/payment-policy, as GET/PUT /api/v2/client/payment-policy
 * with the app's key): the portal calls its admin API, which checks every field, and records here who asked.
 */
export function portalPolicyRoutes(router: Router, deps: PortalPolicyDeps, form: PortalForm): void {
  const tx = deps.transactionsAdmin;
  const render = async (
    req: Request,
    res: Response,
    extra: { notice?: string; error?: string; asked?: PolicyAsked; invalid?: string | null } = {},
    status = 200,
  ) => {
    const { app, role } = portalLocals(res) as { app: App; role: MemberRole };
    let policy: PaymentPolicyView | null = null;
    let error = extra.error;
    try {
      policy = await tx.paymentPolicy(app.id);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      error ??= err.detail;
      status = status === 200 ? err.status : status;
    }
    policyPage(
      res,
      frameOf(deps, req, res, { notice: extra.notice, error }),
      { app, role, policy, asked: extra.asked, invalid: extra.invalid },
      status,
    );
  };

  const set = async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const { actor, detail } = portalActor(req, res);
    const asked: PolicyAsked = {};
    for (const name of FIELDS) {
      const raw = (req.body as Record<string, unknown>)[name];
      // an emptied field is sent as typed (the service names it); one left out keeps its value
      if (typeof raw === 'string') asked[name] = checkedValue(PORTAL_POLICY_FORMS.set, req.body, name) ?? raw;
    }
    let set: PaymentPolicyView;
    try {
      set = await tx.setPaymentPolicy(app.id, policyFields(asked));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return render(req, res, { error: err.detail, asked, invalid: err.attribute }, err.status);
    }
    await deps.audit.record({
      type: 'payment_policy.changed',
      actor,
      subject: app.id,
      detail: {
        ...detail,
        app_id: app.id,
        underpayment_tolerance_percent: set.underpayment_tolerance_percent,
        flag_overpayment: set.flag_overpayment,
        default_expires_in: set.default_expires_in,
        display_name: set.display_name,
        return_origins: set.return_origins,
      },
    });
    await render(req, res, { notice: 'Payment policy saved: it applies to the requests created from now on.' });
  };

  const signedIn = form(PORTAL_POLICY_FORMS.set).slice(0, 2);
  endpoint(
    router,
    '/portal/apps/:id/payment-policy',
    {
      GET: [...signedIn, requireRole(deps, 'viewer'), (req, res) => render(req, res)],
      POST: [...form(PORTAL_POLICY_FORMS.set), requireRole(deps, 'owner'), set],
    },
    { ...docs.policy, ...docs.set } as EndpointDocs,
  );
}
