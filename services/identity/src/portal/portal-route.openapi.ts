import { htmlResponse, redirectResponse, type EndpointDocs } from '@attest/common';
import { PORTAL_CALLBACK_QUERY, PORTAL_FORMS } from './portal-forms';
import { page, portalForm, tags } from './portal-openapi';

/** /portal, its sign-in (the portal is an app of this provider) and sign-out. */
export const portalSignInDocs = {
  home: page('The portal: sign in, or your apps (and “create an app” with PORTAL_SELF_SERVICE_APPS)', {}),
  signin: {
    GET: {
      summary: 'Sign in to the portal: to /authorize (code flow, PKCE S256) as the portal’s own app',
      tags,
      responses: { 302: redirectResponse('To /authorize') },
    },
  } as EndpointDocs,
  callback: {
    GET: {
      summary: 'The portal’s redirect URI: the code is exchanged at /token, the id_token checked',
      tags,
      query: PORTAL_CALLBACK_QUERY,
      responses: {
        303: redirectResponse('Signed in: to /portal'),
        400: htmlResponse('The sign-in did not complete (state, error, or the code refused); a link to try again'),
      },
    },
  } as EndpointDocs,
  signOut: portalForm('Sign out of the portal (and of Attest, through /logout)', PORTAL_FORMS.signOut),
  signedOut: {
    GET: { summary: 'Where sign-out ends', tags, responses: { 200: htmlResponse('The page') } },
  } as EndpointDocs,
};
