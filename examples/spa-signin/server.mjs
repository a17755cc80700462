// Serves the single-page app (static files) and the oidc-client-ts browser bundle.
//   APP_ID=app_… node examples/spa-signin/server.mjs
// The app is a public client: pnpm --silent manage app create --name SPA --public \
//   --redirect-uri http://localhost:3001/ --web-origin http://localhost:3001
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';

const ISSUER = process.env.ISSUER ?? 'http://localhost:4000';
const PORT = Number(process.env.PORT ?? 3001);
const { APP_ID } = process.env;
if (!APP_ID) {
  console.error(
    `Set APP_ID (a public app: pnpm --silent manage app create --name SPA --public --redirect-uri http://localhost:${PORT}/ --web-origin http://localhost:${PORT})`,
  );
  process.exit(1);
}
// the package's main file is dist/umd/…; the browser bundle (global `oidc`) sits in dist/browser/
const bundle = path.join(
  path.dirname(createRequire(import.meta.url).resolve('oidc-client-ts')),
  '..',
  'browser',
  'oidc-client-ts.min.js',
);

const app = express();
// the page reads its settings from here; nothing secret: a public client has no secret
app.get('/config.js', (_req, res) =>
  res.type('js').send(`window.ATTEST = ${JSON.stringify({ issuer: ISSUER, clientId: APP_ID })};`),
);
const bundleSource = fs.readFileSync(bundle);
app.get('/oidc-client-ts.min.js', (_req, res) => res.type('js').send(bundleSource));
app.use(express.static(path.join(path.dirname(fileURLToPath(import.meta.url)), 'public')));
app.listen(PORT, () => console.log(`spa-signin listening on http://localhost:${PORT}`));
