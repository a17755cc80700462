import type { Queryable } from '@attest/common';

export interface App {
  id: string;
  name: string;
  secretHash: string;
  redirectUris: string[];
  /** Where RP-Initiated Logout may send the browser afterwards (exact match). */
  postLogoutRedirectUris: string[];
  /** Where Back-Channel Logout POSTs a logout_token when a session that signed in to the app ends. */
  backchannelLogoutUri: string | null;
  createdAt: Date;
  disabledAt: Date | null;
}

export interface AppLogoutSettings {
  postLogoutRedirectUris?: string[];
  backchannelLogoutUri?: string | null;
}

interface AppRow {
  id: string;
  name: string;
  secret_hash: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  backchannel_logout_uri: string | null;
  created_at: Date;
  disabled_at: Date | null;
}

const toApp = (r: AppRow): App => ({
  id: r.id,
  name: r.name,
  secretHash: r.secret_hash,
  redirectUris: r.redirect_uris,
  postLogoutRedirectUris: r.post_logout_redirect_uris,
  backchannelLogoutUri: r.backchannel_logout_uri,
  createdAt: r.created_at,
  disabledAt: r.disabled_at,
});

export function appStore(db: Queryable) {
  return {
    async insert(app: { id: string; name: string; secretHash: string; redirectUris: string[] } & AppLogoutSettings): Promise<App> {
      const [row] = await db.query<AppRow>(
        `INSERT INTO apps (id, name, secret_hash, redirect_uris, post_logout_redirect_uris, backchannel_logout_uri)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [app.id, app.name, app.secretHash, app.redirectUris, app.postLogoutRedirectUris ?? [], app.backchannelLogoutUri ?? null],
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
        [id, settings.postLogoutRedirectUris ?? null, settings.backchannelLogoutUri !== undefined, settings.backchannelLogoutUri ?? null],
      );
      return row ? toApp(row) : null;
    },
    async find(id: string): Promise<App | null> {
      const [row] = await db.query<AppRow>('SELECT * FROM apps WHERE id = $1', [id]);
      return row ? toApp(row) : null;
    },
    async list(): Promise<App[]> {
      return (await db.query<AppRow>('SELECT * FROM apps ORDER BY created_at, id')).map(toApp);
    },
    async setSecretHash(id: string, secretHash: string): Promise<boolean> {
      return (await db.query('UPDATE apps SET secret_hash = $2 WHERE id = $1 RETURNING id', [id, secretHash])).length === 1;
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
