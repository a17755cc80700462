import { htmlResponse, redirectResponse, type EndpointDocs } from '@attest/common';
import { FORM, pageError, pageFormErrors } from '../kernel/openapi-document';
import { LOGIN_HINT_FORM } from './ciba-forms';

// OpenAPI fragment of the account page's login hint form (issue 42, CIBA Core §7.1 login_hint_token), served as
// the route registers it (endpoint(…)); see api-documents.ts.

/** POST /account/login-hint-tokens (the schema the route checks: login-hint-section.ts). */
export const loginHintDocs: EndpointDocs = {
  POST: {
    summary:
      'The signed-in person makes an agent (an app with a CIBA mode, by client id) a login_hint_token naming them ' +
      'for 30 days, shown once; the agent is listed under "Agents acting for you", where ending it stops the token',
    tags: ['account'],
    body: { contentType: FORM, schema: LOGIN_HINT_FORM },
    responses: {
      200: htmlResponse(
        'A page showing the login hint token once (#login-hint-token; Cache-Control: no-store), or the account ' +
          'page again with what went wrong',
      ),
      303: redirectResponse('To /signin?next=account without a session'),
      ...pageFormErrors('invalid_parameter or required, naming the field'),
      404: pageError('The account page again: no enabled app with a CIBA mode has that client id'),
    },
  },
};
