import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './support';

/**
 * Heavy modules are loaded at first use, not with the service (docs/deploy.md, "Memory"): viem by the
 * chain watcher (only with CHAIN_RPC_URL), @simplewebauthn/server by the first passkey ceremony
 * (signing keys are made with node's own crypto, no library), joi-to-json (with all of lodash) by the first
 * request for an OpenAPI document, qrcode (with pngjs) by the first payment page with a code. Each service's main module is required in a fresh node process (tsx
 * as the loader), which lists the packages it loaded.
 */
const LAZY = ['viem', '@simplewebauthn/server', 'joi-to-json', 'lodash', 'qrcode', 'pngjs'];

const LIST_PACKAGES = `
require(process.argv[1]);
const names = new Set();
for (const file of Object.keys(require.cache)) {
  const at = file.lastIndexOf('/node_modules/');
  if (at < 0) continue;
  const parts = file.slice(at + '/node_modules/'.length).split('/');
  names.add(parts[0].startsWith('@') ? parts[0] + '/' + parts[1] : parts[0]);
}
process.stdout.write(JSON.stringify([...names]));
`;

async function packagesLoadedBy(script: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '-e', LIST_PACKAGES, path.join(ROOT, script)],
    // without jest's NODE_OPTIONS (--experimental-vm-modules)
    { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
  );
  return JSON.parse(stdout) as string[];
}

describe.each(['identity', 'transactions', 'prices'])('services/%s/src/main.ts', (name) => {
  it('loads express, pg and ioredis but none of the modules kept for first use', async () => {
    const loaded = await packagesLoadedBy(`services/${name}/src/main.ts`);
    // the listing sees what the service needs at once (so an empty listing cannot pass)
    expect(loaded).toEqual(expect.arrayContaining(['express', 'pg', 'ioredis', 'joi']));
    expect(loaded.filter((p) => LAZY.includes(p))).toEqual([]);
  });
});
