import fs from 'node:fs';
import path from 'node:path';

export interface DemoClient {
  app_id: string;
  client_secret: string;
  redirect_uri: string;
}

interface Admin {
  adminUrl: string;
  adminToken: string;
}

async function adminCall(admin: Admin, method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${admin.adminUrl}/admin${route}`, {
    method,
    headers: { authorization: `Bearer ${admin.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** The stored registration is still an enabled app of the provider, with this redirect URI. */
async function stillRegistered(admin: Admin, client: DemoClient): Promise<boolean> {
  const res = await adminCall(admin, 'GET', `/apps/${encodeURIComponent(client.app_id)}`);
  if (res.status === 404) return false;
  if (!res.ok) throw new Error(`demo: checking its app failed with ${res.status}`);
  const app = (await res.json()) as { redirect_uris: string[]; disabled: boolean };
  return !app.disabled && app.redirect_uris.includes(client.redirect_uri);
}

/**
 * Registers the demo as an app on first start and keeps its id and secret in DATA_DIR/demo/client.json
 * (mode 0600); later starts reuse it while the provider still knows it (idempotent across restarts).
 */
export async function ensureDemoClient(admin: Admin, dataDir: string, redirectUri: string): Promise<DemoClient> {
  const file = path.join(dataDir, 'demo', 'client.json');
  if (fs.existsSync(file)) {
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as DemoClient;
    if (stored.redirect_uri === redirectUri && (await stillRegistered(admin, stored))) return stored;
  }
  const res = await adminCall(admin, 'POST', '/apps', { name: 'Attest demo', redirect_uris: [redirectUri] });
  if (res.status !== 201) throw new Error(`demo: registering its app failed with ${res.status}: ${await res.text()}`);
  const created = (await res.json()) as { app_id: string; client_secret: string };
  const client = { app_id: created.app_id, client_secret: created.client_secret, redirect_uri: redirectUri };
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${JSON.stringify(client, null, 2)}\n`, { mode: 0o600 });
  return client;
}
