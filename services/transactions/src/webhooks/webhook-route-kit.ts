import type { Request, RequestHandler, Response } from 'express';
import Joi from 'joi';
import {
  bodyErrorResponses,
  errorResponse,
  jsonBody,
  jsonResponse,
  validate,
  type AuditLog,
  type ResponseDoc,
} from '@attest/common';
import { apiKeyAuthentication, appActor, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { apiKeyResponses } from '../kernel/openapi';
import { requireJson } from '../kernel/request-fields';
import type { WebhookService } from './webhook-service';
import { publicSchemas } from './webhooks.openapi';

/** What the app API's webhook routes share: the path, its parameters, the endpoint of the path, the answers. */

export interface WebhookRouteKitDeps extends ApiKeyAuthDeps {
  webhooks: WebhookService;
  audit?: Pick<AuditLog, 'record'>;
  /** New deliveries are due: look now rather than at the next poll. */
  wake?: () => void;
}

const WEBHOOK_ID = Joi.string()
  .pattern(/^wh_[0-9a-f]{32}$/)
  .required()
  .messages({ 'string.pattern.base': 'webhook_id must be wh_ followed by 32 hexadecimal digits' });
const webhookParams = Joi.object({ webhook_id: WEBHOOK_ID });
const deliveryParams = Joi.object({
  webhook_id: WEBHOOK_ID,
  delivery_id: Joi.string()
    .pattern(/^whd_[0-9a-f]{32}$/)
    .required()
    .messages({ 'string.pattern.base': 'delivery_id must be whd_ followed by 32 hexadecimal digits' }),
});

const BASE = '/api/v2/client/webhooks';
const tags = ['webhooks'];
const security = [{ apiKey: [] }];
const noWebhook = errorResponse('not_found (attribute webhook_id): no webhook endpoint with this id for your app');
const endpointAnswer = (description: string) => jsonResponse(description, publicSchemas.webhook);

/** A JSON body of at most `bodyLimit`. */
export const jsonBodyOf = (bodyLimit: string): RequestHandler[] => [requireJson, jsonBody(bodyLimit)];

/** The responses of an operation with a JSON body: 400 (`badRequest`), the API-key answers, then `rest`. */
const withBody = (badRequest: string, rest: Record<number, ResponseDoc>): Record<number, ResponseDoc> => ({
  ...bodyErrorResponses(badRequest),
  ...apiKeyResponses,
  ...rest,
});

const answer = (res: Response, status: number, value: unknown) =>
  res.status(status).set('Cache-Control', 'no-store').json(value);

const appOf = (res: Response) => verifiedKey(res).appId;

/**
 * The API-key check, the endpoint of the path when it is the app's, the audit record of an
 * app's change, and the shared pieces of the routes and their documentation.
 */
export function webhookRouteKit(deps: WebhookRouteKitDeps) {
  const { webhooks, audit } = deps;
  return {
    ...{ BASE, tags, security, noWebhook, endpointAnswer, webhookParams, deliveryParams, withBody, answer, appOf },
    webhooks,
    auth: apiKeyAuthentication(deps),
    /** The endpoint of the path, when it is the app's. */
    owned: async (req: Request, res: Response) => {
      const { webhook_id: id } = validate(webhookParams, { webhook_id: req.params.webhook_id });
      return webhooks.get(id as string, appOf(res));
    },
    record: (req: Request, res: Response, type: string, subject: string, detail: Record<string, unknown> = {}) =>
      audit?.record({ type, actor: appActor(req, res), subject, detail: { app_id: appOf(res), ...detail } }),
  };
}
