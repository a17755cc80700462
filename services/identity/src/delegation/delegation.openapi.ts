import { htmlResponse, redirectResponse, type EndpointDocs } from '@attest/common';
import { FORM, pageError, pageFormErrors } from '../kernel/openapi-document';
import { END_AGENT_FORM } from './delegation-forms';

// OpenAPI fragment of delegation (issue 42): the account page's form that ends an agent, served as the route
// registers it (endpoint(…)); see api-documents.ts. The token-exchange fields of /token are in TOKEN_FORM.

/** POST /account/agents/end (the schema the route checks: delegation-section.ts). */
export const endAgentDocs: EndpointDocs = {
  POST: {
    summary: 'Stop an agent acting for the person: its delegated tokens and refresh tokens stop at once',
    tags: ['account'],
    body: { contentType: FORM, schema: END_AGENT_FORM },
    responses: {
      303: redirectResponse('Back to /account with a notice; to /signin?next=account without a session'),
      200: htmlResponse('The account page again, with what went wrong'),
      ...pageFormErrors('invalid_parameter or required, naming the field'),
      404: pageError('The account page again: that agent does not act for the person'),
    },
  },
};
