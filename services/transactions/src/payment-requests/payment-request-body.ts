import Joi from 'joi';
import { errors, validate } from '@attest/common';
import { representable, type ChainTokens } from '../kernel/chain-tokens';
import { address, chainField, tokenCode } from '../kernel/request-fields';
import type { CreateRequest } from './create-request';

export const EXPIRY_DEFAULT_SECONDS = 900;
export const EXPIRY_MIN_SECONDS = 60;
export const EXPIRY_MAX_SECONDS = 86400;
export const METADATA_MAX_BYTES = 4096;
export const MAX_ACCEPTED_TOKENS = 10;

/** The body of POST /api/v2/client/payment-requests; each message names its field. */
export const createPaymentRequestSchema = Joi.object({
  app_id: Joi.string()
    .pattern(/^app_[0-9a-f]{32}$/)
    .description('Your app (optional: the API key names it); when given, the API key must be one of its keys')
    .messages({ 'string.pattern.base': 'app_id must be app_ followed by 32 hexadecimal digits' }),
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
    .description(
      `Seconds until it expires: ${EXPIRY_MIN_SECONDS} to ${EXPIRY_MAX_SECONDS} (default: the app's payment policy's default_expires_in, ${EXPIRY_DEFAULT_SECONDS} unless set)`,
    )
    .messages({
      'number.base': 'expires_in must be a whole number of seconds',
      'number.integer': 'expires_in must be a whole number of seconds',
      'number.min': `expires_in must be at least ${EXPIRY_MIN_SECONDS} seconds`,
      'number.max': `expires_in must be at most ${EXPIRY_MAX_SECONDS} seconds (24 h)`,
    }),
  return_url: Joi.string()
    .max(2000)
    .uri({ scheme: ['https'] })
    .description(
      'Where the payment page returns the customer once paid: an https URL on one of your return origins (payment policy)',
    )
    .messages({
      'string.uri': 'return_url must be an https URL',
      'string.uriCustomScheme': 'return_url must be an https URL',
    }),
  metadata: Joi.object()
    .unknown(true)
    .description(`Your own JSON object, returned as is (at most ${METADATA_MAX_BYTES} bytes)`)
    .messages({ 'object.base': 'metadata must be a JSON object' }),
})
  .required()
  .messages({ 'any.required': 'The body must be a JSON object.', 'object.base': 'The body must be a JSON object.' });

/**
 * The body of POST /api/v2/client/payment-requests, checked (the fields, then how they go together:
 * token or accepted_tokens, a price in a fiat currency or in the token) against the chain's tokens.
 */
export function readCreateBody(
  raw: unknown,
  chainTokens: ChainTokens,
): Omit<CreateRequest, 'appId'> & { appIdGiven?: string } {
  const body = validate(createPaymentRequestSchema, raw) as {
    app_id?: string;
    reference: string;
    chain: string;
    token?: string;
    accepted_tokens?: string[];
    to: string;
    amount?: string;
    currency?: string;
    token_amount?: string;
    expires_in?: number;
    metadata?: Record<string, unknown>;
    return_url?: string;
  };
  const tokens = chainTokens[body.chain];
  if (!tokens) throw errors.invalidParameter('chain', `chain must be one of: ${Object.keys(chainTokens).join(', ')}.`);
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
  return {
    ...(body.app_id !== undefined ? { appIdGiven: body.app_id } : {}),
    reference: body.reference,
    chain: body.chain,
    to: body.to,
    price,
    tokens: accepted,
    tokensField,
    expiresInSeconds: body.expires_in ?? null,
    metadata,
    returnUrl: body.return_url ?? null,
  };
}
