import type { Request, RequestHandler } from 'express';
import type Joi from 'joi';

/** Notices after a change (Post/Redirect/Get): a fixed list, nothing from the URL is reflected. */
export const PORTAL_NOTICES: Record<string, string> = {
  saved: 'Settings saved.',
  'member-saved': 'Team changed.',
  'member-removed': 'Member removed.',
  'key-revoked': 'API key revoked: it stops working at once.',
  disabled: 'App disabled.',
  'webhook-saved': 'Endpoint saved.',
  'webhook-removed': 'Endpoint removed, with its delivery log.',
  'webhook-enabled': 'Endpoint enabled: events are sent to it again.',
  'webhook-disabled': 'Endpoint disabled: nothing is sent to it.',
  'test-sent': 'Test event queued: its delivery is in the log below (reload to see how it went).',
  redelivered: 'Delivery queued again: reload to see how it went.',
  enabled: 'App enabled.',
};
export const noticeOf = (req: Request) => {
  const n = typeof req.query.notice === 'string' ? req.query.notice : '';
  return Object.hasOwn(PORTAL_NOTICES, n) ? PORTAL_NOTICES[n] : undefined;
};

/** The steps of a portal form (session, body, CSRF), for its schema. */
export type PortalForm = (schema: Joi.ObjectSchema) => RequestHandler[];
