import Joi from 'joi';
import type { JsonSchema } from '@attest/common';

/** PaymentRequirements (@x402/core): what the seller asks, as it sent it in its 402 answer. */
const requirements = Joi.object({
  scheme: Joi.string().max(40).required().description('exact'),
  network: Joi.string()
    .pattern(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9*]{1,32}$/)
    .required()
    .description('CAIP-2 network id, e.g. eip155:480')
    .messages({ 'string.pattern.base': '{{#label}} must be a CAIP-2 network id such as eip155:480' }),
  asset: Joi.string().max(100).required().description('The token contract'),
  amount: Joi.string().max(78).required().description('Base units of the token, an integer string'),
  payTo: Joi.string().max(100).required().description('The seller’s receiving address'),
  maxTimeoutSeconds: Joi.number().integer().min(0).required(),
  extra: Joi.object()
    .unknown(true)
    .default({})
    .description(
      'name and version: the token’s EIP-712 domain. payment_request_id (optional): the Attest payment request the payment pays. ' +
        'attest-human (optional): {"audience": your resource at Attest, "acr": the least verification level}: the payer must be ' +
        'an agent acting for a verified person, shown by a delegated access token in paymentPayload.extensions["attest-human"].info.token',
    ),
}).unknown(true);

/** VerifyRequest and SettleRequest (@x402/core): the body of POST /x402/verify and /x402/settle. */
export const x402RequestSchema = Joi.object({
  x402Version: Joi.number().integer().required(),
  paymentPayload: Joi.object({
    x402Version: Joi.number().integer().required(),
    resource: Joi.object({ url: Joi.string().max(2000).required() }).unknown(true),
    accepted: requirements.required(),
    payload: Joi.object()
      .unknown(true)
      .required()
      .description('The exact scheme’s EIP-3009 payload: signature, authorization'),
    extensions: Joi.object().unknown(true),
  })
    .unknown(true)
    .required(),
  paymentRequirements: requirements.required(),
})
  .required()
  .messages({ 'any.required': 'The body must be a JSON object.', 'object.base': 'The body must be a JSON object.' });

/** The person behind the agent, when the requirements asked for it (the attest-human extension). */
const humanExtensionAnswer: JsonSchema = {
  type: 'object',
  properties: {
    'attest-human': {
      type: 'object',
      required: ['sub', 'agent'],
      properties: {
        sub: {
          type: 'string',
          description: 'The person’s pairwise subject for the agent app (the delegated token’s sub)',
        },
        agent: { type: 'string', description: 'The agent acting for them: its client id (act.sub)' },
        acr: { type: 'string', description: 'Their verification level (verify’s answer)' },
      },
    },
  },
};

/** VerifyResponse (@x402/core). */
export const verifyResponseSchema: JsonSchema = {
  type: 'object',
  required: ['isValid'],
  properties: {
    isValid: { type: 'boolean' },
    invalidReason: { type: 'string', description: 'The standard reason (see docs/payments.md, x402)' },
    invalidMessage: { type: 'string', description: 'A sentence naming what is wrong' },
    payer: { type: 'string' },
    extensions: humanExtensionAnswer,
  },
};

/** SettleResponse (@x402/core). */
export const settleResponseSchema: JsonSchema = {
  type: 'object',
  required: ['success', 'transaction', 'network'],
  properties: {
    success: { type: 'boolean' },
    errorReason: { type: 'string' },
    errorMessage: { type: 'string' },
    payer: { type: 'string' },
    transaction: { type: 'string', description: 'The transaction hash ("" when nothing was submitted)' },
    network: { type: 'string' },
    amount: { type: 'string' },
    extra: {
      type: 'object',
      properties: { transaction_id: { type: 'string', description: 'The recorded transaction of your app' } },
    },
    extensions: humanExtensionAnswer,
  },
};

/** SupportedResponse (@x402/core). */
export const supportedResponseSchema: JsonSchema = {
  type: 'object',
  required: ['kinds', 'extensions', 'signers'],
  properties: {
    kinds: {
      type: 'array',
      items: {
        type: 'object',
        required: ['x402Version', 'scheme', 'network'],
        properties: { x402Version: { type: 'integer' }, scheme: { type: 'string' }, network: { type: 'string' } },
      },
    },
    extensions: { type: 'array', items: { type: 'string' } },
    signers: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
  },
};
