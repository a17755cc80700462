import { bodyErrorResponses, emptyResponse, type EndpointDocs } from '@attest/common';
import { FORM } from '../kernel/openapi-document';
import { basicAuth, credentialErrors } from './oauth-openapi';
import { REVOKE_FORM } from './oauth-forms';

// OpenAPI fragment of /revoke: served as the route registers it (endpoint(…)); see api-documents.ts.

export const revokeDocs = {
  POST: {
    summary: 'Revoke an access token of the calling app (RFC 7009)',
    tags: ['oidc'],
    security: basicAuth,
    body: {
      contentType: FORM,
      schema: REVOKE_FORM,
    },
    responses: {
      200: emptyResponse(
        'Empty. Also for an unknown, malformed or expired token, and for another app’s token (which stays active)',
      ),
      ...bodyErrorResponses('invalid_content_type, required, invalid_request (a parameter given twice)'),
      ...credentialErrors(),
    },
  },
} satisfies EndpointDocs;
