import type { Router } from 'express';
import Joi from 'joi';
import { adminValidationResponse, documentAdminRoute, jsonResponse, operatorActor, validate } from '@attest/common';
import type { PaymentRequestService } from '../domain/payment-requests';
import type { AmountPolicy } from '../store/payment-request-store';
import { appIdParams } from './admin-routes';

/** PUT /admin/apps/{app_id}/payment-policy: every field optional, the others keep their value. */
export const paymentPolicySchema = Joi.object({
  underpayment_tolerance_percent: Joi.number()
    .min(0)
    .max(50)
    .precision(2)
    .description('An underpayment within this percent of amount_due still makes a request paid (0 to 50, default 0)')
    .messages({
      'number.base': 'underpayment_tolerance_percent must be a number from 0 to 50',
      'number.min': 'underpayment_tolerance_percent must be a number from 0 to 50',
      'number.max': 'underpayment_tolerance_percent must be a number from 0 to 50',
    }),
  flag_overpayment: Joi.boolean()
    .description('An overpayment is always accepted; true (default) marks the request paid_over, false paid')
    .messages({ 'boolean.base': 'flag_overpayment must be true or false' }),
})
  .required()
  .messages({ 'object.base': 'The body must be a JSON object.' });

const POLICY = {
  type: 'object',
  required: ['app_id', 'underpayment_tolerance_percent', 'flag_overpayment'],
  properties: {
    app_id: { type: 'string' },
    underpayment_tolerance_percent: { type: 'string', description: 'Percent, e.g. "2.5"' },
    flag_overpayment: { type: 'boolean' },
  },
};

const view = (appId: string, p: AmountPolicy) => ({
  app_id: appId,
  underpayment_tolerance_percent: p.underpaymentTolerancePercent,
  flag_overpayment: p.flagOverpayment,
});

/**
 * An app's amount policy for payment requests (`pnpm manage app payment-policy`). A request is settled
 * under the policy the app had when it was created.
 */
export function paymentPolicyAdminRoutes(router: Router, deps: { paymentRequests: PaymentRequestService }): void {
  const tags = ['payment requests'];
  documentAdminRoute(router, 'GET', '/apps/:app_id/payment-policy', {
    summary: 'An app’s amount policy for payment requests (the defaults when never set)',
    tags,
    params: appIdParams,
    responses: {
      200: jsonResponse('The policy', POLICY),
      400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits)'),
    },
  });
  router.get('/apps/:app_id/payment-policy', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    res.json(view(appId, await deps.paymentRequests.policy(appId)));
  });

  documentAdminRoute(router, 'PUT', '/apps/:app_id/payment-policy', {
    summary: 'Set an app’s amount policy for the payment requests it creates from now on',
    description: 'Fields left out keep their value. Audited (payment_policy.changed).',
    tags,
    params: appIdParams,
    body: { contentType: 'application/json', schema: paymentPolicySchema },
    responses: {
      200: jsonResponse('The policy now', POLICY),
      400: adminValidationResponse('app_id, underpayment_tolerance_percent (0 to 50) or flag_overpayment'),
    },
  });
  router.put('/apps/:app_id/payment-policy', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    const body = validate(paymentPolicySchema, req.body) as {
      underpayment_tolerance_percent?: number;
      flag_overpayment?: boolean;
    };
    const current = await deps.paymentRequests.policy(appId);
    const set = await deps.paymentRequests.setPolicy(
      appId,
      {
        underpaymentTolerancePercent:
          body.underpayment_tolerance_percent === undefined
            ? current.underpaymentTolerancePercent
            : String(body.underpayment_tolerance_percent),
        flagOverpayment: body.flag_overpayment ?? current.flagOverpayment,
      },
      operatorActor(req, res),
    );
    res.json(view(appId, set));
  });
}
