import Joi from 'joi';
import { validate } from '@attest/common';
import { EXPIRY_MAX_SECONDS, EXPIRY_MIN_SECONDS } from './payment-request-body';
import type { PaymentPolicy } from './payment-request-types';

/** The body of PUT …/payment-policy (admin API and app API alike): every field optional, the others keep their value. */
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
  default_expires_in: Joi.number()
    .integer()
    .min(EXPIRY_MIN_SECONDS)
    .max(EXPIRY_MAX_SECONDS)
    .description(
      `Seconds until a request created without expires_in expires: ${EXPIRY_MIN_SECONDS} to ${EXPIRY_MAX_SECONDS} (default 900)`,
    )
    .messages({
      'number.base': `default_expires_in must be a whole number of seconds from ${EXPIRY_MIN_SECONDS} to ${EXPIRY_MAX_SECONDS}`,
      'number.integer': `default_expires_in must be a whole number of seconds from ${EXPIRY_MIN_SECONDS} to ${EXPIRY_MAX_SECONDS}`,
      'number.min': `default_expires_in must be a whole number of seconds from ${EXPIRY_MIN_SECONDS} to ${EXPIRY_MAX_SECONDS}`,
      'number.max': `default_expires_in must be a whole number of seconds from ${EXPIRY_MIN_SECONDS} to ${EXPIRY_MAX_SECONDS}`,
    }),
  display_name: Joi.string()
    .trim()
    .min(1)
    .max(100)
    .allow(null)
    .description('The name your customers see on the payment page (null: none)'),
  return_origins: Joi.array()
    .items(
      Joi.string()
        .pattern(/^https:\/\/[a-z0-9.-]+(:\d{1,5})?$/)
        .messages({ 'string.pattern.base': 'return_origins must list https origins such as https://shop.example' }),
    )
    .max(10)
    .unique()
    .description('The https origins (https://host[:port]) a payment request’s return_url may point to, at most 10')
    .messages({
      'array.base': 'return_origins must be a list of https origins',
      'array.max': 'return_origins must list at most 10 origins',
      'array.unique': 'return_origins must list each origin once',
    }),
})
  .required()
  .messages({ 'object.base': 'The body must be a JSON object.' });

/** The answer of GET/PUT …/payment-policy (OpenAPI). */
export const PAYMENT_POLICY_SCHEMA = {
  type: 'object',
  required: [
    'app_id',
    'underpayment_tolerance_percent',
    'flag_overpayment',
    'default_expires_in',
    'display_name',
    'return_origins',
  ],
  properties: {
    app_id: { type: 'string' },
    underpayment_tolerance_percent: { type: 'string', description: 'Percent, e.g. "2.5"' },
    flag_overpayment: { type: 'boolean' },
    default_expires_in: { type: 'integer', description: 'Seconds, for a request created without expires_in' },
    display_name: { type: ['string', 'null'], description: 'The name the payment page shows' },
    return_origins: { type: 'array', items: { type: 'string' }, description: 'The origins return_url may point to' },
  },
};

export const policyView = (appId: string, p: PaymentPolicy) => ({
  app_id: appId,
  underpayment_tolerance_percent: p.underpaymentTolerancePercent,
  flag_overpayment: p.flagOverpayment,
  default_expires_in: p.defaultExpiresInSeconds,
  display_name: p.displayName,
  return_origins: p.returnOrigins,
});

/** The policy a PUT body makes of `current`: the fields given, checked; the others as they were. */
export function changedPolicy(current: PaymentPolicy, raw: unknown): PaymentPolicy {
  const body = validate(paymentPolicySchema, raw) as {
    underpayment_tolerance_percent?: number;
    flag_overpayment?: boolean;
    default_expires_in?: number;
    display_name?: string | null;
    return_origins?: string[];
  };
  return {
    underpaymentTolerancePercent:
      body.underpayment_tolerance_percent === undefined
        ? current.underpaymentTolerancePercent
        : String(body.underpayment_tolerance_percent),
    flagOverpayment: body.flag_overpayment ?? current.flagOverpayment,
    defaultExpiresInSeconds: body.default_expires_in ?? current.defaultExpiresInSeconds,
    displayName: body.display_name === undefined ? current.displayName : body.display_name,
    returnOrigins: body.return_origins ?? current.returnOrigins,
  };
}
