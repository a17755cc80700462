import Joi from 'joi';

/**
 * How the identity endpoints' forms and query strings are written, one joi schema each: the routes check
 * requests with them (form-check.ts) and their OpenAPI fragments show the same objects. Each feature's
 * schemas live beside its routes (oauth/oauth-forms.ts, signin/signin-forms.ts, account/account-forms.ts,
 * portal/portal-forms.ts).
 * Fields are checked in the order they are declared here. Every form accepts fields it does not name
 * (`unknown`): OAuth ignores unrecognised parameters, and so do the pages.
 */

export const str = (description?: string) => (description ? Joi.string().description(description) : Joi.string());
export const form = (fields: Record<string, Joi.Schema>) => Joi.object(fields).unknown(true);

/** A passkey ceremony's answer: sign-in, sign-up and the account page's new passkey. */
export const PASSKEY_FIELDS = {
  ceremony: str('The passkey ceremony id the page was given'),
  credential: str('The WebAuthn response, JSON'),
};
