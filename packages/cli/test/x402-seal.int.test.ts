import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CliError } from '../src/admin-client';
import { runCli } from '../src/main';
import { relayerKey } from '../../../services/transactions/src/x402';
import {
  ADMIN_TOKEN,
  transactionsHarness,
  type TransactionsHarness,
} from '../../../services/transactions/test/support';
import { newKey } from '../../../services/transactions/test/support/x402';

/** Issue 43: `pnpm manage x402 seal-relayer-key` seals the relayer key with the service's KEY_ENCRYPTION_KEY. */
describe('pnpm manage x402 seal-relayer-key', () => {
  let h: TransactionsHarness;
  let server: Server;
  let env: NodeJS.ProcessEnv;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-x402-key-'));

  beforeAll(async () => {
    h = await transactionsHarness({ KEY_ENCRYPTION_KEY: 'x402-cli-key-encryption-key-0123456789abcdef' });
    const url = await new Promise<string>((resolve) => {
      server = h.adminApp.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
      );
    });
    env = { ADMIN_TOKEN, TRANSACTIONS_ADMIN_URL: url };
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints the key sealed for X402_RELAYER_KEY and the relayer address; audits the address, never the key', async () => {
    const { key, address } = newKey();
    const file = path.join(dir, 'relayer.key');
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600 });
    const out = (await runCli(['x402', 'seal-relayer-key', '--key-file', file], env)) as Record<string, string>;
    expect(out).toEqual({ sealed_key: expect.stringMatching(/^v1\./), address });
    expect(out.sealed_key).not.toContain(key.slice(2));
    // the service opens it with its own KEY_ENCRYPTION_KEY, as X402_RELAYER_KEY
    expect(relayerKey(out.sealed_key, h.config.keyEncryptionKey)).toBe(key);
    expect(relayerKey(out.sealed_key, 'another-key-encryption-key-0123456789abcdef')).toEqual({
      problem: expect.stringContaining('not with this KEY_ENCRYPTION_KEY'),
    });
    const audit = await h.admin('get', '/audit?type=relayer_key.sealed').expect(200);
    expect(audit.body.events).toEqual([expect.objectContaining({ type: 'relayer_key.sealed', subject: out.address })]);
    expect(JSON.stringify(audit.body)).not.toContain(key.slice(2));
  });

  it('refuses what is not a private key, naming the field', async () => {
    const file = path.join(dir, 'bad.key');
    fs.writeFileSync(file, '0x1234\n');
    const err = await runCli(['x402', 'seal-relayer-key', '--key-file', file], env).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).message).toContain('private_key');
  });
});
