import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { CliError } from '../src/admin-client';
import { HelpText, runCli } from '../src/main';
import { ADMIN_TOKEN, identityHarness, type IdentityHarness } from '../../../services/identity/test/support';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed CLI output in a test

/** `pnpm manage registration-token …` (issue 41, item 2) against the identity admin API, CLIENT_REGISTRATION=token. */
describe('pnpm manage registration-token', () => {
  let identity: IdentityHarness;
  let server: Server;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    identity = await identityHarness({ CLIENT_REGISTRATION: 'token' });
    const url = await new Promise<string>((resolve) => {
      server = identity.adminApp.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
      );
    });
    env = { ADMIN_TOKEN, IDENTITY_ADMIN_URL: url };
  }, 120000);
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await identity.close();
  });

  const manage = async (args: string[]) => (await runCli(args, env)) as Json;

  it('has --help for the noun and each command', async () => {
    const noun = (await runCli(['registration-token', '--help'], {})) as HelpText;
    expect(noun).toBeInstanceOf(HelpText);
    expect(noun.text).toContain('pnpm manage registration-token create --name NAME [--expires-in-days N]');
    expect(noun.text).toContain('pnpm manage registration-token list');
    expect(noun.text).toContain('pnpm manage registration-token revoke TOKEN_ID');
    expect(((await runCli(['--help'], {})) as HelpText).text).toContain('registration-token');
  });

  it('creates a token (shown once) that registers a client; lists it without the token; revokes it', async () => {
    const created = await manage(['registration-token', 'create', '--name', 'ci', '--expires-in-days', '7']);
    expect(created).toMatchObject({ name: 'ci', token: expect.stringMatching(/^reg_/), client_registration: 'token' });
    expect(new Date(created.expires_at).getTime() - Date.now()).toBeGreaterThan(6.9 * 86400000);
    const registered = await request(identity.publicApp)
      .post('/register')
      .set('Authorization', `Bearer ${created.token}`)
      .send({ client_name: 'From CI', redirect_uris: ['https://ci.example/cb'] });
    expect(registered.status).toBe(201);

    const listed = await manage(['registration-token', 'list']);
    expect(JSON.stringify(listed)).not.toContain(created.token);
    expect(listed.registration_tokens).toEqual([
      expect.objectContaining({ id: created.id, name: 'ci', revoked_at: null, last_used_at: expect.any(String) }),
    ]);
    const revoked = await manage(['registration-token', 'revoke', created.id]);
    expect(revoked.revoked_at).toEqual(expect.any(String));
    const refused = await request(identity.publicApp)
      .post('/register')
      .set('Authorization', `Bearer ${created.token}`)
      .send({ redirect_uris: ['https://ci.example/cb'] });
    expect(refused.status).toBe(401);

    // app list marks the registered client as self-registered
    const apps = await manage(['app', 'list']);
    expect(apps.apps.find((a: Json) => a.app_id === registered.body.client_id)).toMatchObject({
      registration: 'dynamic',
      name: 'From CI',
    });
  });

  it('app disable and enable take a metadata document client by its URL (identity only: it has no API keys)', async () => {
    const url = 'https://agent.example/oauth/client.json';
    await identity.ctx.registration.store.upsertDocumentApp({
      id: url,
      name: 'Agent',
      redirectUris: ['https://agent.example/cb'],
      expiresAt: new Date(Date.now() + 3600000),
      metadata: {
        redirect_uris: ['https://agent.example/cb'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    });
    expect(await manage(['app', 'disable', url])).toMatchObject({
      app_id: url,
      registration: 'metadata_document',
      disabled: true,
    });
    expect(await manage(['app', 'enable', url])).toMatchObject({ app_id: url, disabled: false });
  });

  it('names what is wrong', async () => {
    const missing = await runCli(['registration-token', 'create'], env).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(CliError);
    expect((missing as CliError).message).toContain('--name');
    const bad = await runCli(['registration-token', 'create', '--name', 'x', '--expires-in-days', 'soon'], env).catch(
      (e: unknown) => e,
    );
    expect((bad as CliError).message).toContain('expires_in_days');
    const unknown = await runCli(['registration-token', 'revoke', 'rgt_0000000000000000'], env).catch(
      (e: unknown) => e,
    );
    expect((unknown as CliError).message).toContain('not_found');
  });
});
