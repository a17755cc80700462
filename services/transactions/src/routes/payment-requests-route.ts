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
  queryParam,
  sendJson,
  validate,
} from '@attest/common';
import { representable, type ChainTokens } from '../chain/chain-tokens';
import { PAYMENT_REQUEST_ID, type PaymentRequestService } from '../domain/payment-requests';
import { PAYMENT_REQUEST_STATUSES } from '../domain/webhook-events';
import type { ListCursor } from '../store/payment-request-store';
import { apiKeyAuthentication, verifiedKey, type ApiKeyAuthDeps } from './api-key-auth';
import { apiKeyResponses } from './openapi-document';
import { address, chainField, requireJson, tokenCode } from './record-transaction-route';

export interface PaymentRequestsRouteDeps extends ApiKeyAuthDeps {
  paymentRequests: PaymentRequestService;
  tokens: ChainTokens;
  bodyLimit: string;
}

export const EXPIRY_DEFAULT_SECONDS = 900;
export const EXPIRY_MIN_SECONDS = 60;
export const EXPIRY_MAX_SECONDS = 86400;
export const METADATA_MAX_BYTES = 4096;
export const MAX_ACCEPTED_TOKENS = 10;

/** The body of POST /api/v2/client/payment-requests; each message names its field. */
export const createPaymentRequestSchema = Joi.object({
  reference: Joi.string()
    .trim()
    .min(1)
    .max(200)
    .required()
    .description('Your order’s identifier, unique per app (the idempotency key)'),
  chain: chainField,
  token: tokenCode.description(
    'The one token the customer pays in, configured for that chain, e.g. USDCE (or accepted_tokens)',
  ),
  accepted_tokens: Joi.array()
    .items(tokenCode.messages({ 'string.base': 'accepted_tokens must list token codes such as USDCE, WLD' }))
    .min(1)
    .max(MAX_ACCEPTED_TOKENS)
    .unique()
    .description(
      'Or the tokens the customer may pay in, configured for that chain, e.g. ["USDCE","WLD"]: with a fiat price each gets ' +
        'its amount due at its own current price; the request is settled in the token of its first payment (one only with token_amount)',
    )
    .messages({
      'array.base': 'accepted_tokens must be a list of token codes such as ["USDCE","WLD"]',
      'array.min': 'accepted_tokens must list at least one token',
      'array.max': `accepted_tokens must list at most ${MAX_ACCEPTED_TOKENS} tokens`,
      'array.unique': 'accepted_tokens must list each token once',
    }),
  to: address('to').description('Your address that receives the payment'),
  amount: Joi.string()
    .pattern(/^\d{1,12}(\.\d{1,6})?$/)
    .description('A price in a fiat currency, e.g. 12.50 (with currency); the token amount is fixed at creation')
    .messages({ 'string.pattern.base': 'amount must be a decimal number such as 12.50 (up to 6 decimals)' }),
  currency: Joi.string()
    .pattern(/^[A-Za-z]{3}$/)
    .uppercase()
    .description('The fiat currency of amount (ISO 4217), e.g. USD')
    .messages({ 'string.pattern.base': 'currency must be a three-letter ISO 4217 code such as USD' }),
  token_amount: Joi.string()
    .pattern(/^\d{1,78}$/)
    .description('Or a price in the token: integer, the amount × 10^6 whatever the token’s decimals')
    .messages({
      'string.pattern.base':
        'token_amount must be an integer string (the amount times 10^6), with no sign, decimal point or exponent',
    }),
  expires_in: Joi.number()
    .integer()
    .min(EXPIRY_MIN_SECONDS)
    .max(EXPIRY_MAX_SECONDS)
    .default(EXPIRY_DEFAULT_SECONDS)
    .description(
      `Seconds until it expires: ${EXPIRY_MIN_SECONDS} to ${EXPIRY_MAX_SECONDS} (default ${EXPIRY_DEFAULT_SECONDS})`,
    )
    .messages({
      'number.base': 'expires_in must be a whole number of seconds',
      'number.integer': 'expires_in must be a whole number of seconds',
      'number.min': `expires_in must be at least ${EXPIRY_MIN_SECONDS} seconds`,
      'number.max': `expires_in must be at most ${EXPIRY_MAX_SECONDS} seconds (24 h)`,
    }),
  metadata: Joi.object()
    .unknown(true)
    .description(`Your own JSON object, returned as is (at most ${METADATA_MAX_BYTES} bytes)`)
    .messages({ 'object.base': 'metadata must be a JSON object' }),
})
  .required()
  .messages({ 'any.required': 'The body must be a JSON object.', 'object.base': 'The body must be a JSON object.' });

/** A page's cursor: the id of its last row, opaque to the app. */
export const encodeCursor = (c: ListCursor) => Buffer.from(c).toString('base64url');

const CURSOR_ID = /^(pr_[0-9a-f]{32}|0x[0-9a-f]{64})$/;

export function decodeCursor(raw: string | undefined): ListCursor | undefined {
  if (raw === undefined) return undefined;
  const id = /^[A-Za-z0-9_-]{1,200}$/.test(raw) ? Buffer.from(raw, 'base64url').toString('utf8') : '';
  if (!CURSOR_ID.test(id))
    throw errors.invalidParameter('cursor', 'cursor must be the next_cursor of a previous page.');
  return id;
}

/** The query of the list endpoints (payment requests and transactions). */
export const listQuerySchema = (statuses: readonly string[]) =>
  Joi.object({
    reference: Joi.string().max(200).description('Only this reference'),
    status: Joi.string()
      .valid(...statuses)
      .description(`Only this status: ${statuses.join(', ')}`)
      .messages({ 'any.only': `status must be one of ${statuses.join(', ')}.` }),
    since: Joi.date().iso().description('Only those created at or after this time (ISO 8601)').messages({
      'date.format': 'since must be an ISO 8601 time such as 2026-01-31T12:00:00Z',
      'date.base': 'since must be an ISO 8601 time such as 2026-01-31T12:00:00Z',
    }),
    cursor: Joi.string().description('next_cursor of the previous page'),
    limit: Joi.number().integer().min(1).max(100).default(50).description('Page size, 1 to 100 (default 50)').messages({
      'number.base': 'limit must be a whole number from 1 to 100',
      'number.min': 'limit must be a whole number from 1 to 100',
      'number.max': 'limit must be a whole number from 1 to 100',
      'number.integer': 'limit must be a whole number from 1 to 100',
    }),
  });

/** The list query as read (each parameter once). */
export function listQuery(req: Request, statuses: readonly string[]) {
  const q = validate(listQuerySchema(statuses), {
    reference: queryParam(req.query, 'reference'),
    status: queryParam(req.query, 'status'),
    since: queryParam(req.query, 'since'),
    cursor: queryParam(req.query, 'cursor'),
    limit: queryParam(req.query, 'limit'),
  }) as { reference?: string; status?: string; since?: Date; cursor?: string; limit: number };
  return { ...q, after: decodeCursor(q.cursor) };
}

const PAYMENT = {
  type: 'object',
  required: ['transaction_id', 'status', 'token_amount', 'amount_received', 'confirmations', 'late'],
  properties: {
    transaction_id: { type: 'string' },
    reference: { type: 'string' },
    transaction_hash: { type: ['string', 'null'] },
    from: { type: 'string' },
    status: { enum: ['pending', 'mined', 'failed'] },
    reason: { type: ['string', 'null'], description: 'Why it failed (reverted, wrong_recipient, already_claimed, …)' },
    token_amount: { type: 'string', description: 'What the wallet recorded' },
    amount_received: { type: ['string', 'null'], description: 'What the chain moved, once mined (6 decimals)' },
    block_number: { type: ['string', 'null'] },
    block_time: { type: ['string', 'null'], format: 'date-time' },
    confirmations: {
      type: ['integer', 'null'],
      description: 'Blocks since its block, the head as the watcher last saw it',
    },
    late: { type: 'boolean', description: 'Its block came after the request expired' },
    recorded_at: { type: 'string', format: 'date-time' },
  },
};

const RATE = {
  type: 'object',
  description: 'Fiat per token: amount × 10^-decimals',
  properties: { amount: { type: 'string' }, decimals: { type: 'integer' } },
};

export const PAYMENT_REQUEST_SCHEMA = {
  type: 'object',
  required: [
    'id',
    'reference',
    'status',
    'reason',
    'token',
    'accepted_tokens',
    'amount_due',
    'amount_paid',
    'expires_at',
    'payments',
  ],
  properties: {
    id: { type: 'string', pattern: '^pr_[0-9a-f]{32}$' },
    reference: { type: 'string' },
    status: { enum: [...PAYMENT_REQUEST_STATUSES] },
    reason: {
      type: ['string', 'null'],
      description:
        'in_block (detected), reorganised (pending again: the block of a detected payment was reorganised away), underpaid, underpaid_within_tolerance (paid), overpaid (paid_over), paid_after_expiry (paid_late), expired, or a failed payment’s reason (failed)',
    },
    reason_detail: { type: ['string', 'null'], description: 'A sentence with the amounts' },
    chain: { type: 'string' },
    token: {
      type: ['string', 'null'],
      description:
        'The token it is settled in (amount_due, amount_paid and the amounts are in it): the only accepted token, or the ' +
        'token of its payments; null while several are accepted and no payment is recorded (or all of them failed)',
    },
    accepted_tokens: {
      type: 'array',
      description: 'The tokens it accepts, in the order given, each with its amount due (fixed at creation)',
      items: {
        type: 'object',
        required: ['token', 'amount_due', 'price'],
        properties: {
          token: { type: 'string' },
          amount_due: { type: 'string', pattern: '^\\d+$', description: 'Integer: the amount × 10^6' },
          price: {
            type: ['object', 'null'],
            description: 'A fiat-priced request: the token price this amount was converted at',
            properties: {
              rate: RATE,
              observed_at: { type: 'string', format: 'date-time' },
              source: { type: 'string' },
            },
          },
        },
      },
    },
    to: { type: 'string' },
    amount_due: {
      type: ['string', 'null'],
      pattern: '^\\d+$',
      description: 'Integer: the amount × 10^6, in token; null with token',
    },
    amount_paid: { type: 'string', pattern: '^\\d+$', description: 'What the mined payments received, × 10^6' },
    amount_remaining: { type: ['string', 'null'], pattern: '^\\d+$', description: 'null with token' },
    amount_over: { type: 'string', pattern: '^\\d+$' },
    price: {
      type: ['object', 'null'],
      description:
        'A fiat-priced request: the price, and the price of token it was converted at (null while token is null; each ' +
        'accepted token’s is in accepted_tokens)',
      properties: {
        amount: { type: 'string' },
        currency: { type: 'string' },
        rate: { ...RATE, type: ['object', 'null'] },
        observed_at: { type: ['string', 'null'], format: 'date-time' },
        source: { type: ['string', 'null'] },
      },
    },
    amount_policy: {
      type: 'object',
      properties: {
        underpayment_tolerance_percent: { type: 'string' },
        flag_overpayment: { type: 'boolean' },
      },
    },
    metadata: { type: ['object', 'null'] },
    expires_at: { type: 'string', format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    payments: { type: 'array', items: PAYMENT },
  },
};

/**
 * POST /api/v2/client/payment-requests, GET /api/v2/client/payment-requests/{id} and the list, with the
 * app's API key (the key names the app).
 */
export function paymentRequestsRoute(router: Router, deps: PaymentRequestsRouteDeps): void {
  const create = async (req: Request, res: Response) => {
    const body = validate(createPaymentRequestSchema, req.body) as {
      reference: string;
      chain: string;
      token?: string;
      accepted_tokens?: string[];
      to: string;
      amount?: string;
      currency?: string;
      token_amount?: string;
      expires_in: number;
      metadata?: Record<string, unknown>;
    };
    const tokens = deps.tokens[body.chain];
    if (!tokens)
      throw errors.invalidParameter('chain', `chain must be one of: ${Object.keys(deps.tokens).join(', ')}.`);
    if (body.token !== undefined && body.accepted_tokens !== undefined)
      throw errors.invalidParameter(
        'accepted_tokens',
        'Give token (one token) or accepted_tokens (a list), not both; token is short for accepted_tokens with one token.',
      );
    if (body.token === undefined && body.accepted_tokens === undefined) throw errors.required('accepted_tokens');
    const tokensField = body.token !== undefined ? 'token' : 'accepted_tokens';
    const accepted = (body.accepted_tokens ?? [body.token!]).map((code) => {
      const config = tokens[code];
      if (!config)
        throw errors.invalidParameter(
          tokensField,
          `${tokensField} must name tokens of ${Object.keys(tokens).join(', ')} on ${body.chain} (${JSON.stringify(code)} is not one).`,
        );
      return { token: code, decimals: config.decimals };
    });
    if (body.token_amount !== undefined && accepted.length > 1)
      throw errors.invalidParameter(
        'accepted_tokens',
        'A price in a token (token_amount) is paid in that one token: give token, or accepted_tokens with one token; several accepted tokens need a fiat price (amount and currency).',
      );
    const token = accepted[0];
    if (body.token_amount !== undefined && (body.amount !== undefined || body.currency !== undefined))
      throw errors.invalidParameter(
        'token_amount',
        'Give a price in a fiat currency (amount and currency) or token_amount, not both.',
      );
    if (body.token_amount === undefined && body.amount === undefined) throw errors.required('amount');
    if (body.amount !== undefined && body.currency === undefined) throw errors.required('currency');
    if (body.currency !== undefined && body.amount === undefined) throw errors.required('amount');
    let price: { tokenAmount: bigint } | { amount: string; currency: string };
    if (body.token_amount !== undefined) {
      const amount = BigInt(body.token_amount);
      if (amount === 0n) throw errors.invalidParameter('token_amount', 'token_amount must be more than 0.');
      if (!representable(amount, token.decimals))
        throw errors.invalidParameter(
          'token_amount',
          `token_amount is finer than ${token.token}'s ${token.decimals} decimals allow.`,
        );
      price = { tokenAmount: amount };
    } else {
      if (!/[1-9]/.test(body.amount!)) throw errors.invalidParameter('amount', 'amount must be more than 0.');
      price = { amount: body.amount!.replace(/^0+(?=\d)/, ''), currency: body.currency! };
    }
    const metadata = body.metadata === undefined ? null : JSON.stringify(body.metadata);
    if (metadata !== null && Buffer.byteLength(metadata) > METADATA_MAX_BYTES)
      throw errors.invalidParameter('metadata', `metadata must be at most ${METADATA_MAX_BYTES} bytes of JSON.`);
    const key = verifiedKey(res);
    const { request, created } = await deps.paymentRequests.create(
      {
        appId: key.appId,
        reference: body.reference,
        chain: body.chain,
        to: body.to,
        price,
        tokens: accepted,
        tokensField,
        expiresInSeconds: body.expires_in,
        metadata,
      },
      { type: 'app', id: key.keyId, requestId: req.id, clientAddress: clientAddress(req) },
    );
    const view = await deps.paymentRequests.get(key.appId, request.id);
    res
      .status(created ? 201 : 200)
      .set('Cache-Control', 'no-store')
      .set('Location', `/api/v2/client/payment-requests/${request.id}`)
      .json(view);
  };

  const idParams = Joi.object({
    id: Joi.string()
      .pattern(PAYMENT_REQUEST_ID)
      .required()
      .messages({ 'string.pattern.base': 'id must be pr_ followed by 32 hexadecimal digits.' }),
  });
  // a well-formed id (the usual read) is taken as is; anything else goes through the schema, which names what is wrong
  const read = async (req: Request, res: Response) => {
    const raw = req.params.id;
    const id = typeof raw === 'string' && PAYMENT_REQUEST_ID.test(raw) ? raw : validate(idParams, { id: raw }).id;
    const view = await deps.paymentRequests.get(verifiedKey(res).appId, id);
    if (!view) throw errors.notFound('No payment request with this id for this app.', 'id');
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, view);
  };

  const list = async (req: Request, res: Response) => {
    const q = listQuery(req, PAYMENT_REQUEST_STATUSES);
    const { items, next } = await deps.paymentRequests.list({ appId: verifiedKey(res).appId, ...q });
    res.set('Cache-Control', 'no-store').json({ data: items, next_cursor: next ? encodeCursor(next) : null });
  };

  const one = (description: string) => jsonResponse(description, PAYMENT_REQUEST_SCHEMA);
  const auth = apiKeyAuthentication(deps);
  endpoint(
    router,
    '/api/v2/client/payment-requests',
    { POST: [...auth, requireJson, jsonBody(deps.bodyLimit), create], GET: [...auth, list] },
    {
      POST: {
        summary: 'Create a payment request: an amount of a token to your address, by an expiry',
        description:
          'Priced in a fiat currency (amount + currency: each accepted token’s amount is fixed now from the prices service’s current ' +
          'price, its observed_at and source kept in `accepted_tokens`; a price that is not fresh is 503 price_unavailable, never an old rate) or in ' +
          'the token (token_amount, one token). The accepted tokens: `token` (one) or `accepted_tokens` (a list), not both. ' +
          'The request is settled in the token of its first payment: every payment toward it is in that token. Idempotent per reference: the same body again answers 200 with the same request; a different ' +
          'one 409 reference_taken naming the field. The wallet’s payment is recorded with POST /api/v2/client/transaction and ' +
          'payment_request_id; a transfer to `to` of the token that nobody records is counted too, once final, when it matches ' +
          'this request unambiguously (docs/payments.md). The request then goes pending → detected → paid | paid_over | underpaid | ' +
          'paid_late, or expired, or failed, each with payment_request.* webhook events (payment_request.pending when a detected ' +
          'payment’s block is reorganised away).',
        tags: ['payment requests'],
        security: [{ apiKey: [] }],
        body: { contentType: 'application/json', schema: createPaymentRequestSchema },
        responses: {
          201: one('Created, pending'),
          200: one('The same creation again: the request as it is now'),
          ...bodyErrorResponses(
            'invalid_content_type, required (amount or token_amount, currency with amount, token or accepted_tokens) or ' +
              'invalid_parameter naming the field (token and accepted_tokens both given; several accepted_tokens with token_amount)',
          ),
          ...apiKeyResponses,
          409: errorResponse(
            'reference_taken: this app created the reference with a different body; attribute names the field',
          ),
          503: errorResponse(
            'price_unavailable (attribute currency): no fresh price for the token in that currency (the prices service is away, has no fresh price, or its price is older than PAYMENT_PRICE_MAX_AGE_SECONDS); Retry-After',
          ),
        },
      },
      GET: {
        summary: 'Your app’s payment requests, oldest first, paged',
        tags: ['payment requests'],
        security: [{ apiKey: [] }],
        query: listQuerySchema(PAYMENT_REQUEST_STATUSES),
        responses: {
          200: jsonResponse('A page', {
            type: 'object',
            required: ['data', 'next_cursor'],
            properties: {
              data: { type: 'array', items: PAYMENT_REQUEST_SCHEMA },
              next_cursor: {
                type: ['string', 'null'],
                description: 'Pass as cursor for the next page; null on the last',
              },
            },
          }),
          400: errorResponse('invalid_parameter naming the parameter (status, since, cursor, limit)'),
          ...apiKeyResponses,
        },
      },
    },
  );
  endpoint(
    router,
    '/api/v2/client/payment-requests/:id',
    { GET: [...auth, read] },
    {
      GET: {
        summary: 'A payment request with its payments, amounts, blocks, confirmations and reason',
        description: 'A pending request past its expiry is expired when read (the periodic sweep does it otherwise).',
        tags: ['payment requests'],
        security: [{ apiKey: [] }],
        params: idParams,
        responses: {
          200: one('The request'),
          400: errorResponse('invalid_parameter: id is not pr_ and 32 hexadecimal digits'),
          ...apiKeyResponses,
          404: errorResponse('not_found: no payment request with this id for this app'),
        },
      },
    },
  );
}
