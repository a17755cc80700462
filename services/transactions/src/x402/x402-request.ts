import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { validate } from '@attest/common';
import { x402RequestSchema } from './x402.openapi';

/** The body of POST /x402/verify and /x402/settle, checked. */
export interface X402Request {
  x402Version: number;
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
}

/**
 * The body checked against x402RequestSchema. Joi took 5 % of a verify's CPU (bench/README.md, "What one verify
 * costs"), nearly all of it on bodies a client library sent right. A body that plainly passes the schema, and
 * that Joi would hand back unchanged (no default to add, no number to convert), is taken as it is; anything else
 * goes through Joi, which answers the same 400s naming the field as before. test/x402-request.test.ts checks that
 * whatever the quick check takes, Joi takes too and returns equal.
 */
export function x402Request(body: unknown): X402Request {
  return plainlyValid(body) ? body : (validate(x402RequestSchema, body) as X402Request);
}

type Fields = Record<string, unknown>;

const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max;
// Joi.number().integer(): safe integers only; -0 left to Joi (it may hand back 0)
const isInteger = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && !Object.is(v, -0);
const NETWORK = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9*]{1,32}$/;
const BODY_KEYS = new Set(['x402Version', 'paymentPayload', 'paymentRequirements']);

/** x402.openapi.ts's `requirements`, with `extra` present (Joi adds {} where it is missing). */
const plainRequirements = (r: unknown): boolean =>
  isObject(r) &&
  isString(r.scheme, 40) &&
  typeof r.network === 'string' &&
  NETWORK.test(r.network) &&
  isString(r.asset, 100) &&
  isString(r.amount, 78) &&
  isString(r.payTo, 100) &&
  isInteger(r.maxTimeoutSeconds) &&
  (r.maxTimeoutSeconds as number) >= 0 &&
  isObject(r.extra);

/** Whether the body plainly passes the schema and Joi would hand it back unchanged (exported for its test). */
export function plainlyValid(body: unknown): body is X402Request {
  if (!isObject(body) || !isInteger(body.x402Version)) return false;
  // the body's own keys are closed (the schema allows no others); those inside are open
  for (const key in body) if (!BODY_KEYS.has(key)) return false;
  const p = body.paymentPayload;
  return (
    isObject(p) &&
    isInteger(p.x402Version) &&
    (p.resource === undefined || (isObject(p.resource) && isString(p.resource.url, 2000))) &&
    plainRequirements(p.accepted) &&
    isObject(p.payload) &&
    (p.extensions === undefined || isObject(p.extensions)) &&
    plainRequirements(body.paymentRequirements)
  );
}
