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
      200: htmlResponse('The new app’s settings page, with its client secret shown once'),
      400: pageError('invalid_parameter naming the field (the page again)'),
      403: pageError('invalid_csrf, or self_service_disabled'),
    },
  ),
  app: page('An app’s settings page: client, name and URIs, first sign-in snippet; a sub-navigation to the others', {
    404: notFound,
  }),
  security: page('An app’s security page: client secret, verification level, algorithms, DPoP, PAR, profile', {
    404: notFound,
  }),
  agents: page(
    'An app’s agents and devices page: the device flow, CIBA (mode, notification endpoint), and whether it may act for any person (read-only: the operator sets it)',
    { 404: notFound },
  ),
  team: page('An app’s team page: the members and their roles; an owner’s forms to change them', { 404: notFound }),
  danger: page('An app’s danger zone: disable or enable the app (owner)', { 404: notFound }),
  settings: portalForm(
    'Change an app’s settings (developer or owner); back to its settings page. The security fields are read too when given (the one-page form sent them)',
    PORTAL_FORMS.settings,
    { ...again('The settings page again with what went wrong') },
  ),
  saveSecurity: portalForm(
    'Change an app’s sign-in security (developer or owner); back to its security page. An unchecked box is off',
    PORTAL_FORMS.security,
    { ...again('The security page again with what went wrong') },
  ),
  saveAgents: portalForm(
    'Turn the device flow and CIBA on or off for the app (developer or owner); back to its agents and devices page. An unchecked box is off; the CIBA fields are not read for a public client; may_act_for_users is never read here (the operator’s)',
    PORTAL_FORMS.agents,
    { ...again('The agents and devices page again with what went wrong (e.g. ping mode without an endpoint)') },
  ),
  rotateSecret: portalForm('A new client secret, shown once (developer or owner)', PORTAL_FORMS.appAction, {
    ...again('The security page with the new secret'),
    409: pageError('public_client or private_key_jwt: the app has no secret'),
  }),
  disable: portalForm('Disable the app (owner); back to its danger zone', PORTAL_FORMS.appAction, refused),
  enable: portalForm('Enable the app again (owner); back to its danger zone', PORTAL_FORMS.appAction, refused),
  addMember: portalForm('Add a member, or change a role (owner); back to its team page', PORTAL_FORMS.addMember, {
    ...again('The team page again with what went wrong'),
    409: pageError('last_owner: the only owner stays owner'),
  }),
  removeMember: portalForm('Take a member off the team (owner); back to its team page', PORTAL_FORMS.removeMember, {
    ...again('The team page again with what went wrong'),
    409: pageError('last_owner: the only owner stays'),
  }),
  insight: page('Sign-ins per day and consent withdrawals of the app (counts only)', { 404: notFound }),
};
