import type Joi from 'joi';
import { htmlResponse, redirectResponse, type EndpointDocs, type ResponseDoc } from '@attest/common';
import { FORM, pageError, pageFormErrors } from '../kernel/openapi-document';
import { ACCOUNT_QUERY, ACCOUNT_FORMS } from './account-forms';

// OpenAPI fragment of /account and its forms: served as the route registers it (endpoint(…)); see api-documents.ts.

const accountForm = (
  summary: string,
  schema: Joi.ObjectSchema,
  extra: Record<number, ResponseDoc> = {},
): EndpointDocs => ({
  POST: {
    summary,
    tags: ['account'],
    body: { contentType: FORM, schema },
    responses: {
      303: redirectResponse('Back to /account with a notice; to /signin?next=account without a session'),
      200: htmlResponse('The account page again, with what went wrong'),
      ...pageFormErrors('invalid_parameter or required, naming the field'),
      404: pageError('not_found: no such session, passkey or consent of this user'),
      429: pageError('too_many_requests: too many wrong current passwords'),
      ...extra,
    },
  },
});

/** Passkey changes need a recent sign-in (ACCOUNT_REAUTH_SECONDS; issue 23): else 403 and a link to sign in again. */
const reauthentication = {
  403: pageError(
    'invalid_csrf: the form’s CSRF token is missing or not this browser’s, or the last sign-in is ' +
      'older than ACCOUNT_REAUTH_SECONDS, 5 minutes by default (the account page again, with a link to sign in again at /signin?next=account)',
  ),
};

export const accountDocs = {
  GET: {
    summary: 'The account page: sessions, consents, passkeys, password',
    tags: ['account'],
    query: ACCOUNT_QUERY,
    responses: {
      200: htmlResponse('The page'),
      302: redirectResponse('To /signin?next=account without a session'),
    },
  },
} as EndpointDocs;

/** The account page's forms, by ACCOUNT_FORMS name. */
export const accountFormDocs = {
  withdrawConsent: accountForm('Withdraw the consent given to an app', ACCOUNT_FORMS.withdrawConsent),
  addPasskey: accountForm('Add a passkey', ACCOUNT_FORMS.addPasskey, {
    ...reauthentication,
    409: pageError('The account page again: that passkey is already registered'),
  }),
  removePasskey: accountForm('Remove a passkey', ACCOUNT_FORMS.removePasskey, {
    ...reauthentication,
    409: pageError('The account page again: the last passkey of an account without a password stays'),
  }),
  changePassword: accountForm('Change the password', ACCOUNT_FORMS.changePassword),
  endSession: accountForm('End one of the user’s sessions', ACCOUNT_FORMS.endSession),
  endOtherSessions: accountForm('End every session of the user but this one', ACCOUNT_FORMS.endOtherSessions),
} satisfies Record<keyof typeof ACCOUNT_FORMS, EndpointDocs>;
