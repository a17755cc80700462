import { redirectResponse, type EndpointDocs } from '@attest/common';
import { FORM, pageError, pageFormErrors } from '../kernel/openapi-document';
import { APPROVAL_FORMS } from './ciba-forms';

// OpenAPI fragment of the account page's approval forms (issue 42): served as the route registers it.

const refusals = {
  403: pageError('invalid_csrf: the form’s CSRF token is missing or not this browser’s'),
  404: pageError('not_found: the request is not this person’s, was decided already, or expired'),
};

export const approvalDocs = {
  approve: {
    POST: {
      summary:
        'Approve a pending backchannel request (CIBA) with a fresh proof: a passkey assertion with user ' +
        'verification (ceremony, credential) or the password',
      tags: ['account'],
      body: { contentType: FORM, schema: APPROVAL_FORMS.approve },
      responses: {
        303: redirectResponse('Back to /account?approval=approved; to /signin?next=account without a session'),
        ...pageFormErrors(
          'invalid_password (the password is wrong), invalid_credential (the passkey assertion failed, is ' +
            'another account’s, or did not verify the user), required (no password on the account)',
        ),
        ...refusals,
        429: pageError('too_many_requests: too many wrong passwords or passkey assertions'),
      },
    },
  },
  deny: {
    POST: {
      summary: 'Deny a pending backchannel request (CIBA): one click, no proof needed',
      tags: ['account'],
      body: { contentType: FORM, schema: APPROVAL_FORMS.deny },
      responses: {
        303: redirectResponse('Back to /account?approval=denied; to /signin?next=account without a session'),
        ...pageFormErrors('required, naming the field'),
        ...refusals,
      },
    },
  },
} satisfies Record<keyof typeof APPROVAL_FORMS, EndpointDocs>;
