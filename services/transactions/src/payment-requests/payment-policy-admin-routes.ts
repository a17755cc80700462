import type { Router } from 'express';
import Joi from 'joi';
import { adminRoute, adminValidationResponse, jsonResponse, operatorActor, validate } from '@attest/common';
import { appIdOf } from '../kernel/admin-route';
import { appIdParams } from '../kernel/admin-params';
import type { PaymentRequestService } from './payment-request-service';
import type { AmountPolicy } from './payment-request-types';

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
export interface PaymentPolicyAdminDeps {
  paymentRequests: Pick<PaymentRequestService, 'policy' | 'setPolicy'>;
}

export function paymentPolicyAdminRoutes(router: Router, deps: PaymentPolicyAdminDeps): void {
  const tags = ['payment requests'];
  adminRoute(
    router,
    'GET',
    '/apps/:app_id/payment-policy',
    {
      summary: 'An app’s amount policy for payment requests (the defaults when never set)',
      tags,
      params: appIdParams,
      responses: {
        200: jsonResponse('The policy', POLICY),
        400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits)'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      res.json(view(appId, await deps.paymentRequests.policy(appId)));
    },
  );

  adminRoute(
    router,
    'PUT',
    '/apps/:app_id/payment-policy',
    {
      summary: 'Set an app’s amount policy for the payment requests it creates from now on',
      description: 'Fields left out keep their value. Audited (payment_policy.changed).',
      tags,
      params: appIdParams,
      body: { contentType: 'application/json', schema: paymentPolicySchema },
      responses: {
        200: jsonResponse('The policy now', POLICY),
        400: adminValidationResponse('app_id, underpayment_tolerance_percent (0 to 50) or flag_overpayment'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
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
    },
  );
}
