import fs from 'node:fs';
import path from 'node:path';

export interface DemoClient {
  app_id: string;
  client_secret: string;
  redirect_uri: string;
}

/** The demo's URIs at the provider: the code flow's callback, and where RP-initiated logout comes back to. */
export interface DemoUris {
  redirectUri: string;
  postLogoutRedirectUri: string;
}

interface Admin {
  adminUrl: string;
  adminToken: string;
}

interface RegisteredApp {
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
  /** CIBA (issue 42): the demo's agent asks the person to approve a payment, and polls for the answer. */
  backchannel_token_delivery_mode?: string | null;
  disabled: boolean;
}

/** The demo's trips API (issue 42): the resource the person lets the demo's agent act on. */
export interface DemoResource {
  uri: string;
  scopes: string[];
}

async function adminCall(admin: Admin, method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${admin.adminUrl}/admin${route}`, {
    method,
    headers: { authorization: `Bearer ${admin.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** The stored registration as the provider knows it, or null when it is gone, disabled or has another callback. */
async function registered(admin: Admin, client: DemoClient): Promise<RegisteredApp | null> {
  const res = await adminCall(admin, 'GET', `/apps/${encodeURIComponent(client.app_id)}`);
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`demo: checking its app failed with ${res.status}`);
  const app = (await res.json()) as RegisteredApp;
  return !app.disabled && app.redirect_uris.includes(client.redirect_uri) ? app : null;
}

/**
 * A registration from before the demo could sign out, or before its agents section: adds the post-logout URI
 * and turns CIBA's poll mode on (one PATCH, which keeps the other settings). Each start does so again when an
 * owner turned CIBA off in the portal: the agents section needs it.
 */
async function upgrade(admin: Admin, client: DemoClient, app: RegisteredApp, uri: string): Promise<void> {
  const current = app.post_logout_redirect_uris ?? [];
  const changes = {
    ...(current.includes(uri) ? {} : { post_logout_redirect_uris: [...current, uri] }),
    ...(app.backchannel_token_delivery_mode ? {} : { backchannel_token_delivery_mode: 'poll' }),
  };
  if (Object.keys(changes).length === 0) return;
  const res = await adminCall(admin, 'PATCH', `/apps/${encodeURIComponent(client.app_id)}`, changes);
  if (!res.ok) throw new Error(`demo: updating its app failed with ${res.status}: ${await res.text()}`);
}

/**
 * Registers the demo as an app on first start and keeps its id and secret in DATA_DIR/demo/client.json
 * (mode 0600); later starts reuse it while the provider still knows it (idempotent across restarts),
 * adding the post-logout redirect URI and CIBA's poll mode to a registration made before them.
 */
export async function ensureDemoClient(admin: Admin, dataDir: string, uris: DemoUris): Promise<DemoClient> {
  const file = path.join(dataDir, 'demo', 'client.json');
  if (fs.existsSync(file)) {
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as DemoClient;
    const app = stored.redirect_uri === uris.redirectUri ? await registered(admin, stored) : null;
    if (app) {
      await upgrade(admin, stored, app, uris.postLogoutRedirectUri);
      return stored;
    }
  }
  const res = await adminCall(admin, 'POST', '/apps', {
    name: 'Attest demo',
    redirect_uris: [uris.redirectUri],
    post_logout_redirect_uris: [uris.postLogoutRedirectUri],
    backchannel_token_delivery_mode: 'poll',
  });
  if (res.status !== 201) throw new Error(`demo: registering its app failed with ${res.status}: ${await res.text()}`);
  const created = (await res.json()) as { app_id: string; client_secret: string };
  const client = { app_id: created.app_id, client_secret: created.client_secret, redirect_uri: uris.redirectUri };
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${JSON.stringify(client, null, 2)}\n`, { mode: 0o600 });
  return client;
}

/**
 * The demo's trips API as a resource (RFC 8707) at the provider, registered on first start and found by its
 * uri afterwards (idempotent; a registration another start made is reused as it is). The demo never acts as
 * its resource server, so the introspection secret of a new registration is not kept.
 */
export async function ensureDemoResource(admin: Admin, resource: DemoResource): Promise<DemoResource> {
  const list = await adminCall(admin, 'GET', '/resources');
  if (!list.ok) throw new Error(`demo: listing resources failed with ${list.status}`);
  const found = ((await list.json()) as DemoResource[]).find((r) => r.uri === resource.uri);
  if (found) return { uri: found.uri, scopes: found.scopes };
  const res = await adminCall(admin, 'POST', '/resources', { name: 'Attest demo: trips API', ...resource });
  if (res.status !== 201)
    throw new Error(`demo: registering its resource failed with ${res.status}: ${await res.text()}`);
  const created = (await res.json()) as DemoResource;
  return { uri: created.uri, scopes: created.scopes };
}
