import type { Request, Response, Router } from 'express';
import {
  AppError,
  bodyErrorResponses,
  endpoint,
  errorResponse,
  jsonBody,
  jsonResponse,
  sendJson,
} from '@attest/common';
import { apiKeyAuthentication, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { apiKeyResponses } from '../kernel/openapi';
import { requireJson } from '../kernel/request-fields';
import type { X402Facilitator } from './facilitator';
import { x402Request } from './x402-request';
import { settleResponseSchema, supportedResponseSchema, verifyResponseSchema, x402RequestSchema } from './x402.openapi';

export interface X402RouteDeps extends ApiKeyAuthDeps {
  /** The facilitator, once the chain answered; null when no chain is configured (CHAIN_RPC_URL). */
  facilitator: () => Promise<X402Facilitator | null>;
  bodyLimit: string;
}

const unavailable = () =>
  new AppError('x402_unavailable', 503, 'x402 needs a chain: this service has no CHAIN_RPC_URL.', null);

const notConfiguredDoc = errorResponse(
  'x402_unavailable: no chain configured (CHAIN_RPC_URL); service_unavailable: the chain’s RPC does not answer',
);

/**
 * The x402 v2 facilitator API (@x402/core's HTTPFacilitatorClient with this service's URL + /x402 and the app's API
 * key as its auth headers): GET /x402/supported, POST /x402/verify, POST /x402/settle. A negative answer is 200
 * with the standard invalidReason / errorReason, as x402 facilitators answer. Answers are written with sendJson
 * (Node's own calls, with the other answers of the same turn), not Express's res.json: 7 % of a verify's CPU.
 * The three are answered before Express's router (`fast`: the same steps, in the same order; see FastPath),
 * whose matching of the service's other routes was ~5 % of a verify's CPU.
 */
export function x402Routes(router: Router, deps: X402RouteDeps): void {
  const facilitator = async (): Promise<X402Facilitator> => {
    const f = await deps.facilitator();
    if (!f) throw unavailable();
    return f;
  };
  const body = (req: Request) => x402Request(req.body);
  const auth = apiKeyAuthentication(deps);
  const tag = ['x402'];
  const security = [{ apiKey: [] }];

  endpoint(
    router,
    '/x402/supported',
    {
      GET: [
        ...auth,
        async (_req: Request, res: Response) => {
          sendJson(res.set('Cache-Control', 'no-store'), (await facilitator()).supported);
        },
      ],
    },
    {
      GET: {
        summary: 'x402: the schemes and networks this facilitator settles',
        description:
          'The exact scheme (EIP-3009) on the configured chain (CAIP-2 eip155:<chain id>), and the relayer address.',
        tags: tag,
        security,
        responses: {
          200: jsonResponse('SupportedResponse', supportedResponseSchema),
          ...apiKeyResponses,
          503: notConfiguredDoc,
        },
      },
    },
    { fast: true },
  );

  endpoint(
    router,
    '/x402/verify',
    {
      POST: [
        ...auth,
        requireJson,
        jsonBody(deps.bodyLimit),
        async (req: Request, res: Response) => {
          const { paymentPayload, paymentRequirements } = body(req);
          const f = await facilitator();
          const verdict = await f.verifier.verify(verifiedKey(res).appId, paymentPayload, paymentRequirements);
          sendJson(res.set('Cache-Control', 'no-store'), verdict.response);
        },
      ],
    },
    {
      POST: {
        summary: 'x402: verify a payment without moving funds',
        description:
          'Checks the EIP-3009 authorization against the requirements: the payer’s EIP-712 signature (EOA, or ERC-1271 ' +
          'for a contract wallet), the network and token of this service’s chain configuration, `to` equal to `payTo` and ' +
          'an address your app registered as its own, the amount, the validity window, the nonce unused on chain and not ' +
          'being settled, the payer’s balance, X402_MIN_AMOUNT and X402_MAX_AMOUNT.',
        tags: tag,
        security,
        body: { contentType: 'application/json', schema: x402RequestSchema },
        responses: {
          200: jsonResponse('VerifyResponse: isValid, or invalidReason and invalidMessage', verifyResponseSchema),
          ...bodyErrorResponses('invalid_content_type, required or invalid_parameter naming the field'),
          ...apiKeyResponses,
          503: notConfiguredDoc,
        },
      },
    },
    { fast: true },
  );

  endpoint(
    router,
    '/x402/settle',
    {
      POST: [
        ...auth,
        requireJson,
        jsonBody(deps.bodyLimit),
        async (req: Request, res: Response) => {
          const { paymentPayload, paymentRequirements } = body(req);
          const f = await facilitator();
          const outcome = await f.settler.settle(verifiedKey(res).appId, paymentPayload, paymentRequirements);
          sendJson(res.set('Cache-Control', 'no-store'), outcome);
        },
      ],
    },
    {
      POST: {
        summary: 'x402: settle a verified payment on chain',
        description:
          'Verifies, then submits transferWithAuthorization from the relayer, waits for the receipt and answers the ' +
          'transaction hash; the payment is recorded as a `pay` transaction of your app (reference: x402:id: and the payment-identifier ' +
          'extension’s id, else x402:<nonce> and the resource URL; payment_request_id from the requirements’ extra). One ' +
          'authorization settles once, for one resource and one set of requirements: a retry of it answers the first ' +
          'outcome; the same authorization for another resource or other requirements is refused ' +
          'invalid_exact_evm_nonce_already_used. A receipt not seen within ' +
          'X402_RECEIPT_TIMEOUT_SECONDS answers settlement_in_progress with the hash: settle again for the outcome (nothing ' +
          'is sent twice).',
        tags: tag,
        security,
        body: { contentType: 'application/json', schema: x402RequestSchema },
        responses: {
          200: jsonResponse(
            'SettleResponse: success and the transaction hash, or errorReason and errorMessage',
            settleResponseSchema,
          ),
          ...bodyErrorResponses('invalid_content_type, required or invalid_parameter naming the field'),
          ...apiKeyResponses,
          503: notConfiguredDoc,
        },
      },
    },
    { fast: true },
  );
}
