import type { Queryable } from '@attest/common';
import type { VerificationLevel } from './user-store';

/** How an app authenticates at /token, /par, /introspect and /revoke (OAuth client metadata names). */
/** An app's security profile: none, or FAPI 2.0 (app-profile.ts says what it implies). */
export type AppProfile = 'none' | 'fapi2';

/**
 * How an app came to be (issue 41): an operator (admin API, portal), RFC 7591 Dynamic Client Registration,
 * or a Client ID Metadata Document (its id is the document's https URL).
 */
export type AppRegistration = 'operator' | 'dynamic' | 'metadata_document';

export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
export const TOKEN_ENDPOINT_AUTH_METHODS: TokenEndpointAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'none',
];

/** The algorithms an id_token may be signed with, and an app's keys may sign with (FAPI 2.0 asks for PS256 or ES256). */
export type SigningAlg = 'RS256' | 'PS256' | 'ES256';
export const SIGNING_ALGS: SigningAlg[] = ['RS256', 'PS256', 'ES256'];

/** A public JWK as an app registers it (RFC 7517); only the members a verification needs are read. */
export type ClientJwk = Record<string, unknown> & { kty: string; kid?: string; alg?: string; use?: string };
export interface ClientJwks {
  keys: ClientJwk[];
}

/** CIBA Core §5: the token delivery modes Attest offers (push is not offered). */
export type BackchannelDeliveryMode = 'poll' | 'ping';

export interface App {
  id: string;
  name: string;
  /** null for a public client (token_endpoint_auth_method none). */
  secretHash: string | null;
  /** true: no secret, PKCE S256 required, code flow only (RFC 8252, OAuth for browser-based apps). */
  public: boolean;
  /** none for a public client; a client_secret_* app proves itself with its secret either way (Basic or form). */
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** The app's public keys, inline (private_key_jwt assertions, signed request objects). */
  jwks: ClientJwks | null;
  /** Where the app publishes its public keys (fetched through the outbound guard, cached). */
  jwksUri: string | null;
  /** Every authorization request must come through /par (RFC 9126 §6). */
  requirePushedAuthorizationRequests: boolean;
  /** The algorithm of the app's id_tokens. */
  idTokenSignedResponseAlg: SigningAlg;
  /** The algorithm of the app's access tokens: RS256 unless set; PS256 or ES256 under fapi2. */
  accessTokenSignedResponseAlg: SigningAlg;
  redirectUris: string[];
  /** Where RP-Initiated Logout may send the browser afterwards (exact match). */
  postLogoutRedirectUris: string[];
  /** Where Back-Channel Logout POSTs a logout_token when a session that signed in to the app ends. */
  backchannelLogoutUri: string | null;
  /** Origins whose pages may call /token (CORS). */
  webOrigins: string[];
  /** RFC 9449 §5.2: a token request without a DPoP proof is refused; every access token is DPoP-bound. */
  dpopBoundAccessTokens: boolean;
  /** Issue 42: the operator lets this app (an agent) exchange a token another app got of a person (RFC 8693). */
  mayActForUsers: boolean;
  /** The lowest verification level /authorize lets through for this app; null: none. */
  minVerificationLevel: VerificationLevel | null;
  /** fapi2: the FAPI 2.0 Security Profile (app-profile.ts); none: each setting as set. */
  profile: AppProfile;
  /**
   * RFC 8628 (issue 41): the app may use the Device Authorization Grant (/device_authorization, then
   * grant_type urn:ietf:params:oauth:grant-type:device_code at /token). Off unless enabled.
   */
  deviceAuthorizationGrant: boolean;
  /**
   * A self-registered client (RFC 7591, or a metadata document) whose grant_types include refresh_token
   * (issue 41): its code's and device's grants give a refresh token without offline_access in scope; the
   * person consents to it on the same page. Operator apps ask with offline_access.
   */
  refreshTokenGrant: boolean;
  /** Who made it: an operator, or the client itself (dynamic, metadata_document: not reviewed by an operator). */
  registration: AppRegistration;
  /** A metadata document's app: when the document is fetched again; null for every other app. */
  metadataExpiresAt: Date | null;
  /** CIBA (issue 42): how the app learns a backchannel request's outcome, poll or ping; null: no CIBA. */
  backchannelTokenDeliveryMode: BackchannelDeliveryMode | null;
  /** CIBA ping mode: where {auth_req_id} is POSTed once the person decided (through the outbound guard). */
  backchannelClientNotificationEndpoint: string | null;
  createdAt: Date;
  disabledAt: Date | null;
}

export interface AppLogoutSettings {
  postLogoutRedirectUris?: string[];
  backchannelLogoutUri?: string | null;
}

/** The fields an administrator may change; absent ones stay as they are (a null logout URI clears it). */
export type AppUpdate = Partial<
  Pick<
    App,
    | 'name'
    | 'redirectUris'
    | 'postLogoutRedirectUris'
    | 'backchannelLogoutUri'
    | 'webOrigins'
    | 'tokenEndpointAuthMethod'
    | 'secretHash'
    | 'jwks'
    | 'jwksUri'
    | 'requirePushedAuthorizationRequests'
    | 'idTokenSignedResponseAlg'
    | 'accessTokenSignedResponseAlg'
    | 'dpopBoundAccessTokens'
    | 'mayActForUsers'
    | 'minVerificationLevel'
    | 'profile'
    | 'backchannelTokenDeliveryMode'
    | 'backchannelClientNotificationEndpoint'
    | 'deviceAuthorizationGrant'
  >
>;

/** Each changeable field's column: a new field is one line here and one in the admin schema. */
const APP_UPDATE_COLUMNS: { [K in keyof Required<AppUpdate>]: string } = {
  name: 'name',
  redirectUris: 'redirect_uris',
  postLogoutRedirectUris: 'post_logout_redirect_uris',
  backchannelLogoutUri: 'backchannel_logout_uri',
  webOrigins: 'web_origins',
  tokenEndpointAuthMethod: 'token_endpoint_auth_method',
  secretHash: 'secret_hash',
  jwks: 'jwks',
  jwksUri: 'jwks_uri',
  requirePushedAuthorizationRequests: 'require_pushed_authorization_requests',
  idTokenSignedResponseAlg: 'id_token_signed_response_alg',
  accessTokenSignedResponseAlg: 'access_token_signed_response_alg',
  dpopBoundAccessTokens: 'dpop_bound_access_tokens',
  mayActForUsers: 'may_act_for_users',
  minVerificationLevel: 'min_verification_level',
  profile: 'profile',
  backchannelTokenDeliveryMode: 'backchannel_token_delivery_mode',
  backchannelClientNotificationEndpoint: 'backchannel_client_notification_endpoint',
  deviceAuthorizationGrant: 'device_authorization_grant',
};

/** An apps row as the database returns it (the registration feature reads and writes its own columns). */
export interface AppRow {
  id: string;
  name: string;
  secret_hash: string | null;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  jwks: ClientJwks | null;
  jwks_uri: string | null;
  require_pushed_authorization_requests: boolean;
  id_token_signed_response_alg: SigningAlg;
  access_token_signed_response_alg: SigningAlg;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  backchannel_logout_uri: string | null;
  web_origins: string[];
  dpop_bound_access_tokens: boolean;
  may_act_for_users?: boolean;
  min_verification_level: VerificationLevel | null;
  profile: AppProfile;
  device_authorization_grant?: boolean;
  registration?: AppRegistration;
  metadata_expires_at?: Date | null;
  /** The metadata a self-registered client sent (020_client_registration.sql); only its grant_types are read here. */
  registered_metadata?: { grant_types?: string[] } | null;
  backchannel_token_delivery_mode?: BackchannelDeliveryMode | null;
  backchannel_client_notification_endpoint?: string | null;
  created_at: Date;
  disabled_at: Date | null;
}

export const toApp = (r: AppRow): App => ({
  id: r.id,
  name: r.name,
  secretHash: r.secret_hash,
  public: r.token_endpoint_auth_method === 'none',
  tokenEndpointAuthMethod: r.token_endpoint_auth_method,
  jwks: r.jwks,
  jwksUri: r.jwks_uri,
  requirePushedAuthorizationRequests: r.require_pushed_authorization_requests,
  idTokenSignedResponseAlg: r.id_token_signed_response_alg,
  accessTokenSignedResponseAlg: r.access_token_signed_response_alg ?? 'RS256',
  redirectUris: r.redirect_uris,
  postLogoutRedirectUris: r.post_logout_redirect_uris,
  backchannelLogoutUri: r.backchannel_logout_uri,
  webOrigins: r.web_origins,
  dpopBoundAccessTokens: r.dpop_bound_access_tokens,
  mayActForUsers: r.may_act_for_users ?? false,
  minVerificationLevel: r.min_verification_level ?? null,
  profile: r.profile,
  deviceAuthorizationGrant: r.device_authorization_grant ?? false,
  refreshTokenGrant:
    (r.registration ?? 'operator') !== 'operator' &&
    (r.registered_metadata?.grant_types ?? []).includes('refresh_token'),
  registration: r.registration ?? 'operator',
  metadataExpiresAt: r.metadata_expires_at ?? null,
  backchannelTokenDeliveryMode: r.backchannel_token_delivery_mode ?? null,
  backchannelClientNotificationEndpoint: r.backchannel_client_notification_endpoint ?? null,
  createdAt: r.created_at,
  disabledAt: r.disabled_at,
});

/** A new app: secretHash null makes a public client, unless it authenticates with private_key_jwt. */
export interface NewApp {
  id: string;
  name: string;
  secretHash: string | null;
  redirectUris: string[];
  webOrigins?: string[];
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  jwks?: ClientJwks | null;
  jwksUri?: string | null;
  requirePushedAuthorizationRequests?: boolean;
  idTokenSignedResponseAlg?: SigningAlg;
  accessTokenSignedResponseAlg?: SigningAlg;
  dpopBoundAccessTokens?: boolean;
  mayActForUsers?: boolean;
  minVerificationLevel?: VerificationLevel | null;
  profile?: AppProfile;
  backchannelTokenDeliveryMode?: BackchannelDeliveryMode | null;
  backchannelClientNotificationEndpoint?: string | null;
  deviceAuthorizationGrant?: boolean;
}

export function appStore(db: Queryable) {
  return {
    async insert(app: NewApp & AppLogoutSettings): Promise<App> {
      const [row] = await db.query<AppRow>(
        `INSERT INTO apps (id, name, secret_hash, token_endpoint_auth_method, redirect_uris, web_origins, post_logout_redirect_uris, backchannel_logout_uri,
                           jwks, jwks_uri, require_pushed_authorization_requests, id_token_signed_response_alg,
                           dpop_bound_access_tokens, min_verification_level, profile, access_token_signed_response_alg,
                           backchannel_token_delivery_mode, backchannel_client_notification_endpoint, device_authorization_grant,
                           may_act_for_users)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) RETURNING *`,
        [
          app.id,
          app.name,
          app.secretHash,
          app.tokenEndpointAuthMethod ?? (app.secretHash === null ? 'none' : 'client_secret_basic'),
          app.redirectUris,
          app.webOrigins ?? [],
          app.postLogoutRedirectUris ?? [],
          app.backchannelLogoutUri ?? null,
          app.jwks ?? null,
          app.jwksUri ?? null,
          app.requirePushedAuthorizationRequests ?? false,
          app.idTokenSignedResponseAlg ?? 'RS256',
          app.dpopBoundAccessTokens ?? false,
          app.minVerificationLevel ?? null,
          app.profile ?? 'none',
          app.accessTokenSignedResponseAlg ?? 'RS256',
          app.backchannelTokenDeliveryMode ?? null,
          app.backchannelClientNotificationEndpoint ?? null,
          app.deviceAuthorizationGrant ?? false,
          app.mayActForUsers ?? false,
        ],
      );
      return toApp(row);
    },
    /** Changes the logout settings given; null when there is no such app. */
    async setLogoutSettings(id: string, settings: AppLogoutSettings): Promise<App | null> {
      const [row] = await db.query<AppRow>(
        `UPDATE apps SET
           post_logout_redirect_uris = coalesce($2, post_logout_redirect_uris),
           backchannel_logout_uri = CASE WHEN $3 THEN $4 ELSE backchannel_logout_uri END
         WHERE id = $1 RETURNING *`,
        [
          id,
          settings.postLogoutRedirectUris ?? null,
          settings.backchannelLogoutUri !== undefined,
          settings.backchannelLogoutUri ?? null,
        ],
      );
      return row ? toApp(row) : null;
    },
    async find(id: string): Promise<App | null> {
      const [row] = await db.query<AppRow>('SELECT * FROM apps WHERE id = $1', [id]);
      return row ? toApp(row) : null;
    },
    /** Oldest first, after the app `after` (by creation, then id). */
    async list(q: { after?: string; limit: number } = { limit: 1000000 }): Promise<App[]> {
      const rows = await db.query<AppRow>(
        `SELECT * FROM apps WHERE $1::text IS NULL OR (created_at, id) > (SELECT created_at, id FROM apps WHERE id = $1)
         ORDER BY created_at, id LIMIT $2`,
        [q.after ?? null, q.limit],
      );
      return rows.map(toApp);
    },
    async update(id: string, changes: AppUpdate): Promise<App | null> {
      const fields = (Object.keys(APP_UPDATE_COLUMNS) as (keyof AppUpdate)[]).filter((k) => changes[k] !== undefined);
      if (fields.length === 0) return this.find(id);
      const set = fields.map((k, i) => `${APP_UPDATE_COLUMNS[k]} = $${i + 2}`).join(', ');
      const [row] = await db.query<AppRow>(`UPDATE apps SET ${set} WHERE id = $1 RETURNING *`, [
        id,
        ...fields.map((k) => changes[k]),
      ]);
      return row ? toApp(row) : null;
    },
    async originRegistered(origin: string): Promise<boolean> {
      const sql = 'SELECT 1 FROM apps WHERE $1 = ANY (web_origins) AND disabled_at IS NULL LIMIT 1';
      return (await db.query(sql, [origin])).length === 1;
    },
    async setSecretHash(id: string, secretHash: string): Promise<boolean> {
      const sql =
        "UPDATE apps SET secret_hash = $2 WHERE id = $1 AND token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post') RETURNING id";
      return (await db.query(sql, [id, secretHash])).length === 1;
    },
    async setDisabled(id: string, disabled: boolean): Promise<App | null> {
      const [row] = await db.query<AppRow>(
        `UPDATE apps SET disabled_at = CASE WHEN $2 THEN coalesce(disabled_at, now()) ELSE NULL END WHERE id = $1 RETURNING *`,
        [id, disabled],
      );
      return row ? toApp(row) : null;
    },
  };
}
export type AppStore = ReturnType<typeof appStore>;
