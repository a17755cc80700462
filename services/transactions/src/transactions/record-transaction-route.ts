import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import {
  bodyErrorResponses,
  clientAddress,
  endpoint,
  errorResponse,
  errors,
  jsonBody,
  jsonResponse,
  validate,
} from '@attest/common';
import { apiKeyAuthentication, invalidApp, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { representable, type ChainTokens } from '../kernel/chain-tokens';
import { apiKeyResponses, receivingAddressResponses } from '../kernel/openapi';
import { address, chainField, requireJson, tokenCode } from '../kernel/request-fields';
import type { PaymentRequestLookup } from '../kernel/settlement';
import type { TransactionType } from '../kernel/transaction';
import type { ReceivingAddressService } from '../receiving-addresses';
import type { TransactionService } from './transaction-service';
import { toSpec } from './transaction-spec';

export interface RecordTransactionRouteDeps extends ApiKeyAuthDeps {
  transactions: TransactionService;
  /** The requests a payment may name (payment_request_id). */
  paymentRequests: PaymentRequestLookup;
  /** The chains and tokens a payment may be recorded in (CHAIN_TOKENS). */
  tokens: ChainTokens;
  bodyLimit: string;
  /** `to` must be one of the app's receiving addresses on the chain (issue 40, item 1). */
  receivingAddresses: Pick<ReceivingAddressService, 'requireReceivingAddress'>;
}

/** The body of POST /api/v2/client/transaction; each message names its field. */
export const recordTransactionSchema = Joi.object({
  app_id: Joi.string()
    .pattern(/^app_[0-9a-f]{32}$/)
    .description('Your app (optional: the API key names it); when given, the API key must be one of its keys')
    .messages({ 'string.pattern.base': 'app_id must be app_ followed by 32 hexadecimal digits' }),
  type: Joi.string()
    .valid('pay', 'sendTransaction')
    .required()
    .messages({ 'any.only': 'type must be pay or sendTransaction' }),
  reference: Joi.string()
    .trim()
    .min(1)
    .max(200)
    .required()
    .description('Your identifier, unique per app (the idempotency key)'),
  transaction_hash: Joi.string()
    .pattern(/^0x[0-9a-fA-F]{64}$/)
    .lowercase()
    .required()
    .messages({ 'string.pattern.base': 'transaction_hash must be 0x followed by 64 hexadecimal digits' }),
  chain: chainField,
  token: tokenCode.required().description('A token code configured for that chain, e.g. USDCE, WLD'),
  to: address('to'),
  token_amount: Joi.string()
    .pattern(/^\d{1,78}$/)
    .when('payment_request_id', { is: Joi.exist(), otherwise: Joi.required() })
    .description(
      'Integer: the amount × 10^6, whatever the token’s decimals. Optional with payment_request_id (the chain decides ' +
        'what counts; the request’s amount due in that token is recorded)',
    )
    .messages({
      'string.pattern.base':
        'token_amount must be an integer string (the amount times 10^6), with no sign, decimal point or exponent',
    }),
  from: address('from'),
  payment_request_id: Joi.string()
    .pattern(/^pr_[0-9a-f]{32}$/)
    .description(
      'The payment request this payment pays (its id, not its reference): chain and to must be the request’s and token one ' +
        'of its accepted tokens (the one it is settled in, once a payment is recorded); ' +
        'the amount the chain moves counts toward it, whatever token_amount says',
    )
    .messages({ 'string.pattern.base': 'payment_request_id must be pr_ followed by 32 hexadecimal digits' }),
})
  .required()
  .messages({ 'any.required': 'The body must be a JSON object.', 'object.base': 'The body must be a JSON object.' });

/**
 * POST /api/v2/client/transaction: an app records a payment it sent (with its API key), stored
 * pending for the chain watcher to verify. Idempotent per (app_id, reference): the same record again
 * answers 200 with the same transaction; a different one 409 reference_taken naming the field. A
 * transaction another payment holds is 409 transaction_already_claimed (transaction_hash).
 */
export function recordTransactionRoute(router: Router, deps: RecordTransactionRouteDeps): void {
  const record = async (req: Request, res: Response) => {
    const body = validate(recordTransactionSchema, req.body);
    // app_id is optional, as on POST /api/v2/client/payment-requests: the key names the app; a given one must be it
    if (body.app_id !== undefined && verifiedKey(res).appId !== body.app_id) throw invalidApp();
    const appId = verifiedKey(res).appId;
    const tokens = deps.tokens[body.chain];
    if (!tokens)
      throw errors.invalidParameter('chain', `chain must be one of: ${Object.keys(deps.tokens).join(', ')}.`);
    const token = tokens[body.token];
    if (!token)
      throw errors.invalidParameter(
        'token',
        `token must be one of ${Object.keys(tokens).join(', ')} on ${body.chain}.`,
      );
    let amount = BigInt(body.token_amount ?? 0);
    if (body.token_amount !== undefined && !representable(amount, token.decimals))
      throw errors.invalidParameter(
        'token_amount',
        `token_amount is finer than ${body.token}'s ${token.decimals} decimals allow.`,
      );
    if (body.payment_request_id) {
      const request = await deps.paymentRequests.forPayment(appId, body.payment_request_id);
      for (const [field, recorded, asked] of [
        ['chain', body.chain, request.chain],
        ['to', body.to.toLowerCase(), request.to.toLowerCase()],
      ] as const)
        if (recorded !== asked)
          throw errors.invalidParameter(
            field,
            `${field} must be the payment request's (${asked}) to pay payment request ${request.id}.`,
          );
      // a token the request does not accept is refused here; one it accepts but is not paid in (the request
      // is settled in the token of its first payment) is refused with 409 payment_token_mismatch as it is stored
      const accepted = request.accepted.map((a) => a.token);
      if (!accepted.includes(body.token))
        throw errors.invalidParameter(
          'token',
          `token must be one of the payment request's accepted tokens (${accepted.join(', ')}) to pay payment request ${request.id}.`,
        );
      // no token_amount: the chain decides what counts; the amount due in that token is what is expected
      if (body.token_amount === undefined)
        amount = BigInt(request.accepted.find((a) => a.token === body.token)!.amountDue);
    }
    // a payment to another app's address (or to nobody's) is not this app's to claim
    await deps.receivingAddresses.requireReceivingAddress(appId, body.chain, body.to, 'to');
    const { transaction, created } = await deps.transactions.recordOnce(
      {
        appId,
        type: body.type as TransactionType,
        reference: body.reference,
        transactionHash: body.transaction_hash,
        status: 'pending',
        from: body.from,
        to: body.to,
        chain: body.chain,
        token: body.token,
        tokenAmount: amount.toString(),
        paymentRequestId: body.payment_request_id ?? null,
      },
      `api:${verifiedKey(res).keyId}`,
      { type: 'app', id: verifiedKey(res).keyId, requestId: req.id, clientAddress: clientAddress(req) },
    );
    res
      .status(created ? 201 : 200)
      .set('Cache-Control', 'no-store')
      .json({ transaction_id: transaction.id, ...toSpec(transaction) });
  };

  const recorded = (description: string) =>
    jsonResponse(description, {
      allOf: [
        {
          type: 'object',
          required: ['transaction_id'],
          properties: { transaction_id: { type: 'string', pattern: '^0x[0-9a-f]{64}$' } },
        },
        { $ref: '#/components/schemas/Transaction' },
      ],
    });
  endpoint(
    router,
    '/api/v2/client/transaction',
    { POST: [...apiKeyAuthentication(deps), requireJson, jsonBody(deps.bodyLimit), record] },
    {
      POST: {
        summary: 'Record a payment or transaction your app sent, for the chain watcher to verify',
        description:
          'Stored pending. It becomes mined only when a final block holds a successful transaction with a Transfer of the ' +
          'configured token contract (or a native transfer) from `from` to `to` of exactly `token_amount`; otherwise failed, ' +
          'with the reason in the Transaction-Status-Reason header of the lookup. Idempotent per (app_id, reference). ' +
          'A transaction_hash pays at most one recorded payment, across all apps: bind `from` to the wallet of your signed-in user. ' +
          '`to` must be one of your app’s receiving addresses on the chain (/api/v2/client/receiving-addresses). ' +
          'With payment_request_id the payment pays that payment request: it is mined when the chain holds a transfer of the token ' +
          'from `from` to `to` (of any amount: the amount the chain moved counts toward the request). A transfer to the ' +
          'request’s `to` that nobody recorded is counted by the chain watcher once final; recording it afterwards for that ' +
          'request answers 200 with the payment the watcher made of it (reference chain:<hash>:<log index>).',
        tags: ['transactions'],
        security: [{ apiKey: [] }],
        body: { contentType: 'application/json', schema: recordTransactionSchema },
        responses: {
          201: recorded('Recorded, pending'),
          200: recorded(
            'The same record again: the transaction already recorded, as it is now; or a transaction the chain watcher already ' +
              'counted for this payment_request_id (same from and to): that payment, mined',
          ),
          ...bodyErrorResponses(
            'invalid_content_type (not application/json), required or invalid_parameter naming the field (also an unknown chain or token, ' +
              'or a chain or to that is not the payment request’s, or a token it does not accept)',
          ),
          ...apiKeyResponses,
          ...receivingAddressResponses,
          404: errorResponse('not_found (attribute payment_request_id): no payment request with this id for this app'),
          409: errorResponse(
            'reference_taken: this app recorded the reference with different values; attribute names the first field that differs. ' +
              'transaction_already_claimed (attribute transaction_hash): another recorded payment, of any app, holds this ' +
              'transaction on this chain (one on-chain transaction pays at most one payment; one that failed lets it go). ' +
              'payment_token_mismatch (attribute token): the payment request is being paid in another of its accepted tokens ' +
              '(every payment toward a request is in the token of its first payment that has not failed)',
          ),
        },
      },
    },
  );
}
