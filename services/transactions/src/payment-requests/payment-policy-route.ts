import type { Request, Response, Router } from 'express';
import { bodyErrorResponses, endpoint, jsonBody, jsonResponse } from '@attest/common';
import { apiKeyAuthentication, appActor, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { apiKeyResponses } from '../kernel/openapi';
import { requireJson } from '../kernel/request-fields';
import { changedPolicy, PAYMENT_POLICY_SCHEMA, paymentPolicySchema, policyView } from './payment-policy-fields';
import type { PaymentPolicyService } from './payment-policy-service';

export interface PaymentPolicyRouteDeps extends ApiKeyAuthDeps {
  paymentPolicies: Pick<PaymentPolicyService, 'policy' | 'setPolicy'>;
  bodyLimit: string;
}

/**
 * GET/PUT /api/v2/client/payment-policy: the app's payment policy (underpayment tolerance, overpayment
 * handling, default expiry) with its API key, as the operator's `pnpm manage app payment-policy` sets it.
 * A request is settled under the policy its app had when it was created.
 */
export function paymentPolicyRoute(router: Router, deps: PaymentPolicyRouteDeps): void {
  const read = async (_req: Request, res: Response) => {
    const appId = verifiedKey(res).appId;
    res.set('Cache-Control', 'no-store').json(policyView(appId, await deps.paymentPolicies.policy(appId)));
  };
  const write = async (req: Request, res: Response) => {
    const appId = verifiedKey(res).appId;
    const next = changedPolicy(await deps.paymentPolicies.policy(appId), req.body);
    const set = await deps.paymentPolicies.setPolicy(appId, next, appActor(req, res));
    res.set('Cache-Control', 'no-store').json(policyView(appId, set));
  };
  const auth = apiKeyAuthentication(deps);
  const tags = ['payment requests'];
  endpoint(
    router,
    '/api/v2/client/payment-policy',
    { GET: [...auth, read], PUT: [...auth, requireJson, jsonBody(deps.bodyLimit), write] },
    {
      GET: {
        summary: 'Your payment policy: underpayment tolerance, overpayment handling, default expiry',
        tags,
        security: [{ apiKey: [] }],
        responses: {
          200: jsonResponse('The policy (the defaults when never set)', PAYMENT_POLICY_SCHEMA),
          ...apiKeyResponses,
        },
      },
      PUT: {
        summary: 'Set your payment policy for the payment requests you create from now on',
        description:
          'Fields left out keep their value. A request is settled under the policy its app had when it was created. ' +
          'Audited (payment_policy.changed, the key as actor).',
        tags,
        security: [{ apiKey: [] }],
        body: { contentType: 'application/json', schema: paymentPolicySchema },
        responses: {
          200: jsonResponse('The policy now', PAYMENT_POLICY_SCHEMA),
          ...bodyErrorResponses(
            'invalid_parameter naming the field: underpayment_tolerance_percent (0 to 50, 2 decimals), flag_overpayment (true or false), default_expires_in (60 to 86400 seconds)',
          ),
          ...apiKeyResponses,
        },
      },
    },
  );
}
