import Joi from 'joi';
import { AppError } from '@attest/common';

/**
 * RFC 9396 (Rich Authorization Requests): the authorization_details types Attest understands, checks and
 * shows a person in plain words. Any other type is refused (invalid_authorization_details, §5), as is a
 * field a type does not define: what the person is shown is all the token will say they approved.
 */
export const AUTHORIZATION_DETAILS_TYPES = ['payment', 'action'] as const;
export type AuthorizationDetailType = (typeof AUTHORIZATION_DETAILS_TYPES)[number];

/** At most this many details in one request, and this many characters of JSON in all. */
export const MAX_DETAILS = 10;
export const MAX_DETAILS_CHARS = 8000;

/**
 * Characters a person cannot see, or that change how the text around them reads: controls, format characters
 * (bidirectional overrides such as U+202E, zero-width spaces and joiners), private-use and unassigned code
 * points, line or paragraph separators, and the letters and marks that show as blanks (Hangul fillers, the
 * braille blank, the combining grapheme joiner, variation selectors).
 * What a person approves must read the same on every screen, and two payees that look alike must be alike.
 */
export const HIDDEN_CHARACTERS =
  /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u115F\u1160\u2800\u3164\uFFA0]|\u034F|\p{Variation_Selector}/u;

const text = (max: number) =>
  Joi.string().trim().min(1).max(max).pattern(HIDDEN_CHARACTERS, { name: 'printable', invert: true });

/** A payment: an amount (a decimal string, never a float), its currency, to whom, and the payer's reference. */
export const PAYMENT_DETAIL = Joi.object({
  type: Joi.string().valid('payment').required(),
  amount: Joi.string()
    .pattern(/^(0|[1-9][0-9]{0,14})(\.[0-9]{1,8})?$/, 'decimal')
    .required()
    .description('A decimal string, e.g. "12.50" (up to 15 digits before the point, 8 after)'),
  currency: Joi.string()
    .pattern(/^[A-Z][A-Z0-9]{2,9}$/, 'currency code')
    .required()
    .description('An ISO 4217 code (EUR, USD) or a token symbol (USDC), upper case'),
  payee: text(200).required().description('Who is paid, as the person knows them'),
  reference: text(200).description('The payment’s reference (an invoice number, an order)'),
});

/** An action: what will be done (a sentence), and on what (a named resource: a URI, a document, an account). */
export const ACTION_DETAIL = Joi.object({
  type: Joi.string().valid('action').required(),
  description: text(500).required().description('What the agent will do, in a sentence the person reads'),
  resource: text(2000).required().description('What it is done on: a URI or the name of a resource'),
});

const SCHEMAS: Record<AuthorizationDetailType, Joi.ObjectSchema> = { payment: PAYMENT_DETAIL, action: ACTION_DETAIL };

export type AuthorizationDetail =
  | { type: 'payment'; amount: string; currency: string; payee: string; reference?: string }
  | { type: 'action'; description: string; resource: string };

export const invalidDetails = (detail: string) =>
  new AppError('invalid_authorization_details', 400, detail, 'authorization_details');

/**
 * The authorization_details parameter (a JSON array of objects, each with a `type` this service knows),
 * checked; or the invalid_authorization_details error that names what is wrong.
 */
export function parseAuthorizationDetails(raw: string): AuthorizationDetail[] {
  if (raw.length > MAX_DETAILS_CHARS)
    throw invalidDetails(`authorization_details must be at most ${MAX_DETAILS_CHARS} characters of JSON.`);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalidDetails('authorization_details must be a JSON array of objects (RFC 9396 §2).');
  }
  if (!Array.isArray(value) || value.length === 0)
    throw invalidDetails('authorization_details must be a non-empty JSON array of objects (RFC 9396 §2).');
  if (value.length > MAX_DETAILS)
    throw invalidDetails(`authorization_details may hold at most ${MAX_DETAILS} entries.`);
  return value.map((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      throw invalidDetails(`authorization_details[${i}] must be a JSON object.`);
    const type = (entry as { type?: unknown }).type;
    if (typeof type !== 'string')
      throw invalidDetails(
        `authorization_details[${i}].type is required (one of: ${AUTHORIZATION_DETAILS_TYPES.join(', ')}).`,
      );
    if (!(AUTHORIZATION_DETAILS_TYPES as readonly string[]).includes(type))
      throw invalidDetails(
        `authorization_details[${i}].type ${JSON.stringify(type.slice(0, 100))} is not a type this server understands ` +
          `(supported: ${AUTHORIZATION_DETAILS_TYPES.join(', ')}).`,
      );
    const { value: checked, error } = SCHEMAS[type as AuthorizationDetailType].validate(entry, {
      abortEarly: true,
      convert: true,
    });
    if (error) {
      const where = error.details[0].path.join('.');
      throw invalidDetails(`authorization_details[${i}].${where}: ${error.details[0].message.replace(/"/g, '')}.`);
    }
    return checked as AuthorizationDetail;
  });
}

/** One detail as the person reads it on the account page. */
export function detailInWords(detail: AuthorizationDetail): string {
  if (detail.type === 'payment')
    return (
      `Pay ${detail.amount} ${detail.currency} to ${detail.payee}` +
      (detail.reference ? ` (reference: ${detail.reference})` : '')
    );
  return `${detail.description} — on ${detail.resource}`;
}
