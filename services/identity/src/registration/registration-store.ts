import type { Queryable } from '@attest/common';
import { toApp, type App, type AppRow } from '../kernel/app-store';

/** The client metadata a client registered (RFC 7591 §2), as it is given back to it (RFC 7592 §3). */
export interface RegisteredMetadata {
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: string;
  scope?: string;
  software_id?: string;
  software_version?: string;
}

/** A dynamically registered app with what RFC 7592 needs of it. */
export interface DynamicApp {
  app: App;
  registrationTokenHash: string | null;
  /** The initial access token it was registered with (`token` policy); null: it registered itself (`open`). */
  registeredWith: string | null;
  metadata: RegisteredMetadata;
}

type DynamicRow = AppRow & {
  registration_token_hash: string | null;
  registered_with: string | null;
  registered_metadata: RegisteredMetadata | null;
};

export interface RegistrationToken {
  id: string;
  name: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

interface TokenRow {
  id: string;
  name: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const toToken = (r: TokenRow): RegistrationToken => ({
  id: r.id,
  name: r.name,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
});

/** The apps table's registration columns (020_client_registration.sql) and the initial access tokens. */
/** RFC 8628: a client that registers this grant type may use the device flow (the app's device_authorization_grant). */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const deviceFlowOf = (metadata: RegisteredMetadata) => metadata.grant_types.includes(DEVICE_CODE_GRANT_TYPE);

export function registrationStore(db: Queryable) {
  return {
    async insertDynamic(input: {
      id: string;
      name: string;
      secretHash: string | null;
      tokenEndpointAuthMethod: 'none' | 'client_secret_basic' | 'client_secret_post';
      redirectUris: string[];
      registrationTokenHash: string;
      registeredWith: string | null;
      metadata: RegisteredMetadata;
    }): Promise<App> {
      const [row] = await db.query<AppRow>(
        `INSERT INTO apps (id, name, secret_hash, token_endpoint_auth_method, redirect_uris, registration,
                           registration_token_hash, registered_with, registered_metadata, device_authorization_grant)
         VALUES ($1, $2, $3, $4, $5, 'dynamic', $6, $7, $8, $9) RETURNING *`,
        [
          input.id,
          input.name,
          input.secretHash,
          input.tokenEndpointAuthMethod,
          input.redirectUris,
          input.registrationTokenHash,
          input.registeredWith,
          input.metadata,
          deviceFlowOf(input.metadata),
        ],
      );
      return toApp(row);
    },
    async findDynamic(id: string): Promise<DynamicApp | null> {
      const [row] = await db.query<DynamicRow>("SELECT * FROM apps WHERE id = $1 AND registration = 'dynamic'", [id]);
      return row
        ? {
            app: toApp(row),
            registrationTokenHash: row.registration_token_hash,
            registeredWith: row.registered_with,
            metadata: row.registered_metadata ?? {
              redirect_uris: row.redirect_uris,
              grant_types: ['authorization_code'],
              response_types: ['code'],
              token_endpoint_auth_method: row.token_endpoint_auth_method,
            },
          }
        : null;
    },
    /** RFC 7592 §2.2: the registration as sent again (its name, redirect URIs and metadata). */
    async updateDynamic(id: string, name: string, redirectUris: string[], metadata: RegisteredMetadata): Promise<App> {
      const [row] = await db.query<AppRow>(
        `UPDATE apps SET name = $2, redirect_uris = $3, registered_metadata = $4, device_authorization_grant = $5
         WHERE id = $1 AND registration = 'dynamic' RETURNING *`,
        [id, name, redirectUris, metadata, deviceFlowOf(metadata)],
      );
      return toApp(row);
    },
    /** The app and, in the same statement, its refresh token families and their tokens (no foreign keys to apps). */
    async deleteDynamic(id: string): Promise<boolean> {
      const rows = await db.query(
        `WITH gone AS (DELETE FROM apps WHERE id = $1 AND registration = 'dynamic' RETURNING id),
              families AS (DELETE FROM refresh_families WHERE client_id IN (SELECT id FROM gone) RETURNING family_id),
              tokens AS (DELETE FROM refresh_tokens WHERE family_id IN (SELECT family_id FROM families))
         SELECT id FROM gone`,
        [id],
      );
      return rows.length > 0;
    },
    /**
     * Open registrations (no initial access token) and metadata-document clients, made before `before`, that
     * no person ever signed in to (no pairwise subject): deleted; their ids and kinds. (A document client
     * named again is fetched again.)
     */
    async deleteUnused(before: Date): Promise<{ id: string; registration: 'dynamic' | 'metadata_document' }[]> {
      return db.query<{ id: string; registration: 'dynamic' | 'metadata_document' }>(
        `DELETE FROM apps
         WHERE ((registration = 'dynamic' AND registered_with IS NULL) OR registration = 'metadata_document')
           AND created_at < $1 AND NOT EXISTS (SELECT 1 FROM subjects WHERE subjects.app_id = apps.id)
         RETURNING id, registration`,
        [before],
      );
    },
    /** A metadata document's app, as the document says now; `inserted` when it was seen for the first time. */
    async upsertDocumentApp(input: {
      id: string;
      name: string;
      redirectUris: string[];
      expiresAt: Date;
      metadata: RegisteredMetadata;
    }): Promise<{ app: App; inserted: boolean; previous: string[] | null }> {
      const [before] = await db.query<{ redirect_uris: string[] }>('SELECT redirect_uris FROM apps WHERE id = $1', [
        input.id,
      ]);
      const [row] = await db.query<AppRow>(
        `INSERT INTO apps (id, name, secret_hash, token_endpoint_auth_method, redirect_uris, registration,
                           metadata_expires_at, registered_metadata, device_authorization_grant)
         VALUES ($1, $2, NULL, 'none', $3, 'metadata_document', $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, redirect_uris = EXCLUDED.redirect_uris,
           metadata_expires_at = EXCLUDED.metadata_expires_at, registered_metadata = EXCLUDED.registered_metadata,
           device_authorization_grant = EXCLUDED.device_authorization_grant
         WHERE apps.registration = 'metadata_document'
         RETURNING *`,
        [input.id, input.name, input.redirectUris, input.expiresAt, input.metadata, deviceFlowOf(input.metadata)],
      );
      return { app: toApp(row), inserted: !before, previous: before?.redirect_uris ?? null };
    },
    /** A document that could not be fetched again: its last version serves until `expiresAt`. */
    async extendDocumentApp(id: string, expiresAt: Date): Promise<void> {
      await db.query("UPDATE apps SET metadata_expires_at = $2 WHERE id = $1 AND registration = 'metadata_document'", [
        id,
        expiresAt,
      ]);
    },

    async insertToken(id: string, name: string, tokenHash: string, expiresAt: Date | null): Promise<RegistrationToken> {
      const [row] = await db.query<TokenRow>(
        `INSERT INTO registration_tokens (id, name, token_hash, expires_at) VALUES ($1, $2, $3, $4)
         RETURNING id, name, created_at, expires_at, revoked_at, last_used_at`,
        [id, name, tokenHash, expiresAt],
      );
      return toToken(row);
    },
    async listTokens(): Promise<RegistrationToken[]> {
      const rows = await db.query<TokenRow>(
        'SELECT id, name, created_at, expires_at, revoked_at, last_used_at FROM registration_tokens ORDER BY created_at, id',
      );
      return rows.map(toToken);
    },
    /** The token with this hash, usable at `now` (not revoked, not expired), its use recorded; else null. */
    async useToken(tokenHash: string, now: Date): Promise<(RegistrationToken & { tokenHash: string }) | null> {
      const [row] = await db.query<TokenRow & { token_hash: string }>(
        `UPDATE registration_tokens SET last_used_at = $2
         WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)
         RETURNING id, name, token_hash, created_at, expires_at, revoked_at, last_used_at`,
        [tokenHash, now],
      );
      return row ? { ...toToken(row), tokenHash: row.token_hash } : null;
    },
    async revokeToken(id: string): Promise<RegistrationToken | null> {
      const [row] = await db.query<TokenRow>(
        `UPDATE registration_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1
         RETURNING id, name, created_at, expires_at, revoked_at, last_used_at`,
        [id],
      );
      return row ? toToken(row) : null;
    },
  };
}
export type RegistrationStore = ReturnType<typeof registrationStore>;
