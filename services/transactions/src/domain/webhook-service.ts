import { randomBytes } from 'node:crypto';
import { decrypt, encrypt, errors, type OutboundPolicy } from '@attest/common';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookStore } from '../store/webhook-store';
import { newWebhookSecret } from './webhook-signature';
import { endpointUrlProblem } from './webhook-targets';

/** After a rotation the previous secret keeps signing this long, so receivers can switch over. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

export const newEndpointId = () => `wh_${randomBytes(16).toString('hex')}`;

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
 * Webhook endpoints of apps and their delivery log. A secret is returned once, when made (add,
 * rotate-secret), and stored sealed with the key-encryption key.
 */
export class WebhookService {
  constructor(
    private readonly store: WebhookStore,
    private readonly keyEncryptionKey: string,
    private readonly targets: OutboundPolicy,
  ) {}

  async add(appId: string, url: string): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const problem = endpointUrlProblem(url, this.targets);
    if (problem) throw errors.invalidParameter('url', problem);
    const secret = newWebhookSecret();
    const endpoint = await this.store.insertEndpoint({
      id: newEndpointId(),
      appId,
      url,
      secretEnc: encrypt(this.keyEncryptionKey, secret),
    });
    return { endpoint, secret };
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

  async deliveries(id: string, limit: number): Promise<DeliveryWithAttempts[]> {
    found(await this.store.findEndpoint(id));
    const deliveries = await this.store.listDeliveries(id, limit);
    const attempts = await this.store.attemptsOf(deliveries.map((d) => d.id));
    return deliveries.map((d) => ({ ...d, log: attempts.filter((a) => a.deliveryId === d.id) }));
  }

  async redeliver(deliveryId: string): Promise<WebhookDelivery> {
    const delivery = await this.store.redeliver(deliveryId);
    if (!delivery) throw errors.notFound('No webhook delivery with this delivery_id.', 'delivery_id');
    return delivery;
  }

  replay(appId: string, since: Date): Promise<{ deliveries: number; events: number }> {
    return this.store.replay(appId, since);
  }
}

function found(endpoint: WebhookEndpoint | null): WebhookEndpoint {
  if (!endpoint) throw errors.notFound('No webhook endpoint with this webhook_id.', 'webhook_id');
  return endpoint;
}
