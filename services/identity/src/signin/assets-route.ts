import fs from 'node:fs';
import path from 'node:path';
import type { Request, Response, Router } from 'express';
import { endpoint, excludedFromApi } from '@attest/common';

/** The @simplewebauthn/browser bundle, from the installed package (its exports hide the file, so go by the package root). */
const webauthnBundle = () =>
  path.join(path.dirname(require.resolve('@simplewebauthn/browser')), '..', 'dist', 'bundle', 'index.umd.min.js');
const ours = (file: string) => path.join(__dirname, '..', '..', 'assets', file);

const ASSETS: Record<string, { file: () => string; type: string }> = {
  'simplewebauthn-browser.js': { file: webauthnBundle, type: 'text/javascript; charset=utf-8' },
  'passkeys.js': { file: () => ours('passkeys.js'), type: 'text/javascript; charset=utf-8' },
  'portal.js': { file: () => ours('portal.js'), type: 'text/javascript; charset=utf-8' },
  'style.css': { file: () => ours('style.css'), type: 'text/css; charset=utf-8' },
};

/** GET /assets/{name}: the pages' stylesheet and scripts, read once at start and served from memory. */
export function assetsRoute(router: Router): void {
  for (const [name, asset] of Object.entries(ASSETS)) {
    const body = fs.readFileSync(asset.file());
    const send = (_req: Request, res: Response) =>
      void res
        .set({
          'Content-Type': asset.type,
          'Cache-Control': 'public, max-age=3600',
          'X-Content-Type-Options': 'nosniff',
        })
        .send(body);
    endpoint(router, `/assets/${name}`, { GET: [send] }, excludedFromApi('a static file of the sign-in pages'));
  }
}
