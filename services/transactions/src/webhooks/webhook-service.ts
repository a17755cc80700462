import { randomBytes } from 'node:crypto';
import { AppError, decrypt, encrypt, errors, type OutboundPolicy } from '@attest/common';
import type { WebhookStore } from './webhook-store';
import type {
  EndpointPatch,
  EventCursor,
  StoredEvent,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
} from './webhook-types';
import { testEvent } from './webhook-endpoint-events';
import { newWebhookSecret } from './webhook-signature';
import { endpointUrlProblem } from './webhook-targets';

/** After a rotation the previous secret keeps signing this long, so receivers can switch over. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

export const newEndpointId = () => `wh_${randomBytes(16).toString('hex')}`;

/** Endpoints one app may have; the database holds the cap (the trigger of migration 011 says 20 too). */
export const MAX_ENDPOINTS_PER_APP = 20;

export interface DeliveryWithAttempts extends WebhookDelivery {
  log: WebhookAttempt[];
}

/** The secrets an endpoint signs with now: its current one, and during a rotation the previous one. */
export function signingSecrets(endpoint: WebhookEndpoint, keyEncryptionKey: string, now = new Date()): string[] {
  const secrets = [decrypt(keyEncryptionKey, endpoint.secretEnc)];
  if (endpoint.previousSecretEnc && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now)
    secrets.push(decrypt(keyEncryptionKey, endpoint.previousSecretEnc));
  return secrets;
}

/**
 * Webhook endpoints of apps and their delivery log. A delivery asked for by hand (a test event, recover,
 * redeliver; enabling again too) ends the endpoint's throttling: whoever asks knows the receiver is ready. A secret is returned once, when made (add,
 * rotate-secret), and stored sealed with the key-encryption key.
 */
export class WebhookService {
  constructor(
    private readonly store: WebhookStore,
    private readonly keyEncryptionKey: string,
    private readonly targets: OutboundPolicy,
  ) {}

  /** `enabledEvents` is checked already (eventFilter); null or absent: every event type. */
  async add(
    appId: string,
    url: string,
    options: { description?: string | null; enabledEvents?: string[] | null } = {},
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    this.checkUrl(url);
    // the cap is the database's (migration 011): concurrent creates cannot pass it together
    const secret = newWebhookSecret();
    const endpoint = await this.store.insertEndpoint({
      id: newEndpointId(),
      appId,
      url,
      secretEnc: encrypt(this.keyEncryptionKey, secret),
      description: options.description,
      enabledEvents: options.enabledEvents,
    });
    if (!endpoint)
      throw new AppError(
        'too_many_webhooks',
        409,
        `An app has at most ${MAX_ENDPOINTS_PER_APP} webhook endpoints; remove one first.`,
        'url',
      );
    return { endpoint, secret };
  }

  private checkUrl(url: string): void {
    const problem = endpointUrlProblem(url, this.targets);
    if (problem) throw errors.invalidParameter('url', problem);
  }

  /** The endpoint, when it exists and (given `appId`) belongs to that app; else 404 naming webhook_id. */
  async get(id: string, appId?: string): Promise<WebhookEndpoint> {
    const endpoint = await this.store.findEndpoint(id);
    return found(endpoint && (appId === undefined || endpoint.appId === appId) ? endpoint : null);
  }

  async update(id: string, patch: EndpointPatch): Promise<WebhookEndpoint> {
    if (patch.url !== undefined) this.checkUrl(patch.url);
    return found(await this.store.updateEndpoint(id, patch));
  }

  /** Disables an endpoint (changed: false when it was disabled already, with its first reason kept). */
  async disable(id: string, reason: string): Promise<{ endpoint: WebhookEndpoint; changed: boolean }> {
    const result = await this.store.disableEndpoint(id, reason);
    found(result?.endpoint ?? null);
    return result!;
  }

  /** Enables an endpoint again: the same secret, its delivery log kept, its health reset. */
  async enable(id: string): Promise<{ endpoint: WebhookEndpoint; changed: boolean }> {
    const result = await this.store.enableEndpoint(id);
    found(result?.endpoint ?? null);
    return result!;
  }

  /** Queues a test event (`webhook.test`, `"test": true`) for this endpoint only; 409 while it is disabled. */
  async sendTest(id: string, appId?: string): Promise<{ eventId: string; type: string }> {
    const endpoint = await this.get(id, appId);
    if (endpoint.disabledAt)
      throw new AppError(
        'webhook_disabled',
        409,
        'This webhook endpoint is disabled; enable it before sending it a test event.',
        'webhook_id',
      );
    const event = testEvent(endpoint);
    await this.store.addEvent(event, { only: endpoint.id });
    await this.store.liftThrottle(endpoint.id);
    return { eventId: event.id, type: event.type };
  }

  /** New deliveries to this endpoint of the events since `since` whose delivery to it failed (and no other succeeded). */
  async recover(id: string, since: Date, appId?: string): Promise<number> {
    await this.get(id, appId);
    const queued = await this.store.recoverFailed(id, since);
    await this.store.liftThrottle(id);
    return queued;
  }

  list(appId: string): Promise<WebhookEndpoint[]> {
    return this.store.listEndpoints(appId);
  }

  async remove(id: string): Promise<WebhookEndpoint> {
    return found(await this.store.removeEndpoint(id));
  }

  async rotateSecret(id: string): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const secret = newWebhookSecret();
    const endpoint = found(
      await this.store.rotateSecret(id, encrypt(this.keyEncryptionKey, secret), ROTATION_OVERLAP_MS),
    );
    return { endpoint, secret };
  }

  /** The endpoint's deliveries, newest first, each with its attempts; `before`: after that delivery (a cursor). */
  async deliveries(id: string, limit: number, before?: string): Promise<DeliveryWithAttempts[]> {
    found(await this.store.findEndpoint(id));
    const deliveries = await this.store.listDeliveries(id, limit, before);
    const attempts = await this.store.attemptsOf(deliveries.map((d) => d.id));
    return deliveries.map((d) => ({ ...d, log: attempts.filter((a) => a.deliveryId === d.id) }));
  }

  /** A new delivery of the same event to the same endpoint; given `webhookId`, only of a delivery to that endpoint. */
  async redeliver(deliveryId: string, webhookId?: string): Promise<WebhookDelivery> {
    if (webhookId !== undefined && (await this.store.findDelivery(deliveryId))?.endpointId !== webhookId)
      throw noDelivery();
    const delivery = await this.store.redeliver(deliveryId);
    if (!delivery) throw noDelivery();
    await this.store.liftThrottle(delivery.endpointId);
    return delivery;
  }

  /** The app's events after the event `after` (its id), oldest first; 400 naming `after` when it is not one of them. */
  async events(
    appId: string,
    after: string | undefined,
    limit: number,
    types: string[] | null,
    /** The query parameter the cursor came in (cursor, or its older name after), named by the error. */
    parameter: 'cursor' | 'after' = 'after',
  ): Promise<StoredEvent[]> {
    let cursor: EventCursor | null = null;
    if (after !== undefined) {
      cursor = await this.store.eventCursor(appId, after);
      if (!cursor)
        throw errors.invalidParameter(
          parameter,
          `${parameter} must be the id of one of your events still retained (the last event_id of the previous page).`,
        );
    }
    return this.store.listEvents(appId, cursor, limit, types);
  }

  async event(appId: string, id: string): Promise<StoredEvent> {
    const event = await this.store.findEvent(appId, id);
    if (!event) throw errors.notFound('No event with this event_id for your app.', 'event_id');
    return event;
  }

  replay(appId: string, since: Date): Promise<{ deliveries: number; events: number }> {
    return this.store.replay(appId, since);
  }
}

const noDelivery = () => errors.notFound('No webhook delivery with this delivery_id.', 'delivery_id');

function found(endpoint: WebhookEndpoint | null): WebhookEndpoint {
  if (!endpoint) throw errors.notFound('No webhook endpoint with this webhook_id.', 'webhook_id');
  return endpoint;
}
