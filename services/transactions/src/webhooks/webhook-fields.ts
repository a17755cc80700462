import Joi from 'joi';
import { eventFilter, MAX_EVENT_FILTERS } from './webhook-filters';
import type { WebhookService } from './webhook-service';
import type { WebhookEndpoint } from './webhook-types';

/** The bodies and queries of the webhook operations, the same in the app API and the admin API. */

const URL_FIELD = Joi.string().max(2000).messages({ 'string.max': 'url must be at most 2000 characters' });
const DESCRIPTION = Joi.string()
  .max(200)
  .allow(null, '')
  .description('Your label for the endpoint')
  .messages({ 'string.max': 'description must be at most 200 characters' });
const ENABLED_EVENTS = Joi.array()
  .items(Joi.string().max(100))
  .max(MAX_EVENT_FILTERS)
  .description(
    'The event types sent to it, each a type (transaction.mined) or a family (transaction.*); empty or absent: every type',
  )
  .messages({ 'array.max': `enabled_events may name at most ${MAX_EVENT_FILTERS} event types` });

export const addSchema = Joi.object({
  url: URL_FIELD.required(),
  description: DESCRIPTION,
  enabled_events: ENABLED_EVENTS,
});
export const updateSchema = Joi.object({
  url: URL_FIELD,
  description: DESCRIPTION,
  enabled_events: ENABLED_EVENTS,
  enabled: Joi.boolean().description(
    'false disables it (nothing is sent); true enables it again, with the same secret',
  ),
})
  .min(1)
  .messages({ 'object.min': 'Give at least one of url, description, enabled_events, enabled.' });

/** The body of an add or update, read: each field checked (enabled_events against the known event types). */
export function endpointFields(body: { description?: string | null; enabled_events?: string[] }): {
  description?: string | null;
  enabledEvents?: string[] | null;
} {
  return {
    ...(body.description !== undefined ? { description: body.description || null } : {}),
    ...(body.enabled_events !== undefined ? { enabledEvents: eventFilter(body.enabled_events, 'enabled_events') } : {}),
  };
}
export const replaySchema = Joi.object({
  since: Joi.date().iso().required().messages({
    'date.format': 'since must be an ISO 8601 time, such as 2026-01-31T12:00:00Z',
    'date.base': 'since must be an ISO 8601 time, such as 2026-01-31T12:00:00Z',
  }),
});
const limitSchema = Joi.number().integer().min(1).max(1000).default(50).messages({
  'number.base': '{{#label}} must be a whole number from 1 to 1000',
  'number.integer': '{{#label}} must be a whole number from 1 to 1000',
  'number.min': '{{#label}} must be a whole number from 1 to 1000',
  'number.max': '{{#label}} must be a whole number from 1 to 1000',
});

/** GET /webhooks/{webhook_id}/deliveries?limit= (other query parameters are ignored). */
export const deliveriesQuery = Joi.object({ limit: limitSchema });

/**
 * An update: the fields (url checked against the outbound guard, enabled_events against the known types),
 * then `enabled` (disable with `disableReason`, or enable again). The endpoint as it is after.
 */
export async function updateEndpoint(
  webhooks: WebhookService,
  id: string,
  body: { url?: string; description?: string | null; enabled_events?: string[]; enabled?: boolean },
  disableReason: string,
): Promise<WebhookEndpoint> {
  const fields = endpointFields(body);
  let endpoint =
    body.url !== undefined || Object.keys(fields).length > 0
      ? await webhooks.update(id, { url: body.url, ...fields })
      : await webhooks.get(id);
  if (body.enabled === false) endpoint = (await webhooks.disable(id, disableReason)).endpoint;
  if (body.enabled === true) endpoint = (await webhooks.enable(id)).endpoint;
  return endpoint;
}
