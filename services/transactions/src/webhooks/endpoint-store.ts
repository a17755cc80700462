import type { Queryable } from '@attest/common';
import { toEndpoint, type EndpointRow } from './webhook-rows';
import type { EndpointPatch, WebhookEndpoint } from './webhook-types';

/** Apps' webhook endpoints: their URL, filter, secrets and health. SQL only. */
export function endpointStore(db: Queryable) {
  return {
    async insertEndpoint(e: {
      id: string;
      appId: string;
      url: string;
      secretEnc: string;
      description?: string | null;
      enabledEvents?: string[] | null;
    }): Promise<WebhookEndpoint | null> {
      // null: the app has its 20 endpoints (the trigger of migration 011 skips the row, under the count's lock)
      const [row] = await db.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (id, app_id, url, secret_enc, description, enabled_events)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [e.id, e.appId, e.url, e.secretEnc, e.description ?? null, e.enabledEvents ?? null],
      );
      return row ? toEndpoint(row) : null;
    },
    async updateEndpoint(id: string, patch: EndpointPatch): Promise<WebhookEndpoint | null> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET url = CASE WHEN $2 THEN $3 ELSE url END,
           description = CASE WHEN $4 THEN $5 ELSE description END,
           enabled_events = CASE WHEN $6 THEN $7::text[] ELSE enabled_events END
         WHERE id = $1 RETURNING *`,
        [
          id,
          patch.url !== undefined,
          patch.url ?? null,
          patch.description !== undefined,
          patch.description ?? null,
          patch.enabledEvents !== undefined,
          patch.enabledEvents ?? null,
        ],
      );
      return row ? toEndpoint(row) : null;
    },
    /** Disables an enabled endpoint (its deliveries wait; no new ones are made); null when there is none. */
    async disableEndpoint(id: string, reason: string): Promise<{ endpoint: WebhookEndpoint; changed: boolean } | null> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2 WHERE id = $1 AND disabled_at IS NULL RETURNING *`,
        [id, reason],
      );
      if (row) return { endpoint: toEndpoint(row), changed: true };
      const endpoint = await this.findEndpoint(id);
      return endpoint && { endpoint, changed: false };
    },
    /**
     * Enables an endpoint again with its secret and history; its health starts afresh (not failing, not
     * throttled). Deliveries that waited are sent.
     */
    async enableEndpoint(id: string): Promise<{ endpoint: WebhookEndpoint; changed: boolean } | null> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL,
           consecutive_failures = 0, failing_notified_at = NULL, throttled_until = NULL
         WHERE id = $1 AND disabled_at IS NOT NULL RETURNING *`,
        [id],
      );
      if (row) return { endpoint: toEndpoint(row), changed: true };
      const endpoint = await this.findEndpoint(id);
      return endpoint && { endpoint, changed: false };
    },
    async findEndpoint(id: string): Promise<WebhookEndpoint | null> {
      const [row] = await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [id]);
      return row ? toEndpoint(row) : null;
    },
    async listEndpoints(appId: string): Promise<WebhookEndpoint[]> {
      return (
        await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE app_id = $1 ORDER BY created_at, id', [
          appId,
        ])
      ).map(toEndpoint);
    },
    /** Removes the endpoint with its deliveries and their log. */
    async removeEndpoint(id: string): Promise<WebhookEndpoint | null> {
      const [row] = await db.query<EndpointRow>('DELETE FROM webhook_endpoints WHERE id = $1 RETURNING *', [id]);
      return row ? toEndpoint(row) : null;
    },
    async rotateSecret(id: string, secretEnc: string, previousValidMs: number): Promise<WebhookEndpoint | null> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET previous_secret_enc = secret_enc, secret_enc = $2,
           previous_secret_expires_at = now() + $3 * interval '1 millisecond'
         WHERE id = $1 RETURNING *`,
        [id, secretEnc, previousValidMs],
      );
      return row ? toEndpoint(row) : null;
    },
    /** Ends the endpoint's throttling now (someone asked for a delivery to it). */
    async liftThrottle(endpointId: string): Promise<void> {
      await db.query(
        'UPDATE webhook_endpoints SET throttled_until = NULL WHERE id = $1 AND throttled_until IS NOT NULL',
        [endpointId],
      );
    },
  };
}
