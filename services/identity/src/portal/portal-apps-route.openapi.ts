import { htmlResponse } from '@attest/common';
import { PORTAL_FORMS } from './portal-forms';
import { pageError } from '../kernel/openapi-document';
import { again, notFound, page, portalForm, refused } from './portal-openapi';

/** /portal/apps…: create an app; an app's page, settings, secret, state, team and insight. */
export const portalAppDocs = {
  createApp: portalForm(
    'Create an app (PORTAL_SELF_SERVICE_APPS); the creator becomes its owner',
    PORTAL_FORMS.createApp,
    {
      200: htmlResponse('The new app’s page, with its client secret shown once'),
      400: pageError('invalid_parameter naming the field (the page again)'),
      403: pageError('invalid_csrf, or self_service_disabled'),
    },
  ),
  app: page('An app: settings, client, first sign-in snippet, team', { 404: notFound }),
  settings: portalForm('Change an app’s settings (developer or owner)', PORTAL_FORMS.settings, {
    ...again('The page again with what went wrong, or with a new client secret shown once'),
  }),
  rotateSecret: portalForm('A new client secret, shown once (developer or owner)', PORTAL_FORMS.appAction, {
    ...again('The app page with the new secret'),
    409: pageError('public_client or private_key_jwt: the app has no secret'),
  }),
  disable: portalForm('Disable the app (owner)', PORTAL_FORMS.appAction, refused),
  enable: portalForm('Enable the app again (owner)', PORTAL_FORMS.appAction, refused),
  addMember: portalForm('Add a member, or change a role (owner)', PORTAL_FORMS.addMember, {
    ...again('The page again with what went wrong'),
    409: pageError('last_owner: the only owner stays owner'),
  }),
  removeMember: portalForm('Take a member off the team (owner)', PORTAL_FORMS.removeMember, {
    ...again('The page again with what went wrong'),
    409: pageError('last_owner: the only owner stays'),
  }),
  insight: page('Sign-ins per day and consent withdrawals of the app (counts only)', { 404: notFound }),
};
