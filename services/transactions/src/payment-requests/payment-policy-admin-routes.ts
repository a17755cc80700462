import type { Router } from 'express';
import { adminRoute, adminValidationResponse, jsonResponse, operatorActor } from '@attest/common';
import { appIdOf } from '../kernel/admin-route';
import { appIdParams } from '../kernel/admin-params';
import {
  changedPolicy,
  PAYMENT_POLICY_SCHEMA as POLICY,
  paymentPolicySchema,
  policyView as view,
} from './payment-policy-fields';
import type { PaymentPolicyService } from './payment-policy-service';

/**
 * An app's amount policy for payment requests (`pnpm manage app payment-policy`). A request is settled
 * under the policy the app had when it was created.
 */
export interface PaymentPolicyAdminDeps {
  paymentPolicies: Pick<PaymentPolicyService, 'policy' | 'setPolicy'>;
}

export function paymentPolicyAdminRoutes(router: Router, deps: PaymentPolicyAdminDeps): void {
  const tags = ['payment requests'];
  adminRoute(
    router,
    'GET',
    '/apps/:app_id/payment-policy',
    {
      summary: 'An app’s payment policy for payment requests (the defaults when never set)',
      tags,
      params: appIdParams,
      responses: {
        200: jsonResponse('The policy', POLICY),
        400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits)'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      res.json(view(appId, await deps.paymentPolicies.policy(appId)));
    },
  );

  adminRoute(
    router,
    'PUT',
    '/apps/:app_id/payment-policy',
    {
      summary: 'Set an app’s payment policy for the payment requests it creates from now on',
      description:
        'The same fields as PUT /api/v2/client/payment-policy (the app’s key) — underpayment_tolerance_percent, flag_overpayment, ' +
        'default_expires_in, display_name, return_origins — which the developer portal’s payment policy page sets for an app’s owners. ' +
        'Fields left out keep their value. Audited (payment_policy.changed).',
      tags,
      params: appIdParams,
      body: { contentType: 'application/json', schema: paymentPolicySchema },
      responses: {
        200: jsonResponse('The policy now', POLICY),
        400: adminValidationResponse(
          'app_id, underpayment_tolerance_percent (0 to 50), flag_overpayment, default_expires_in (60 to 86400), display_name (1 to 100 characters or null) or return_origins (up to 10 https origins)',
        ),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      const current = await deps.paymentPolicies.policy(appId);
      const set = await deps.paymentPolicies.setPolicy(
        appId,
        changedPolicy(current, req.body),
        operatorActor(req, res),
      );
      res.json(view(appId, set));
    },
  );
}
