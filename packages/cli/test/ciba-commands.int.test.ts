import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { CliError } from '../src/admin-client';
import { HelpText, runCli } from '../src/main';
import { ADMIN_TOKEN, identityHarness, type IdentityHarness } from '../../../services/identity/test/support';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed CLI output in a test

/** `pnpm manage app update --ciba-mode … --ciba-notification-endpoint …` (issue 42) against the identity admin API. */
describe('pnpm manage app: CIBA settings', () => {
  let identity: IdentityHarness;
  let server: Server;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    identity = await identityHarness();
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
  const failure = async (args: string[]) => {
    const err = await runCli(args, env).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CliError);
    return (err as CliError).message;
  };

  it('shows the options in --help of app create and app update', async () => {
    for (const verb of ['create', 'update']) {
      const help = ((await runCli(['app', verb, '--help'], {})) as HelpText).text;
      expect(help).toMatch(/--ciba-mode poll\|ping\s+CIBA \(POST \/bc-authorize\)/);
      expect(help).toMatch(/--ciba-notification-endpoint URL\s+CIBA ping mode/);
    }
  });

  it('sets poll, then ping with its endpoint, and turns CIBA off; ping without an endpoint is refused', async () => {
    const { body: app } = await request(identity.adminApp)
      .post('/admin/apps')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ name: 'Agent', redirect_uris: ['https://agent.example/cb'] })
      .expect(201);
    const id = app.app_id as string;
    expect((await manage(['app', 'update', id, '--ciba-mode', 'poll'])).backchannel_token_delivery_mode).toBe('poll');
    expect(await failure(['app', 'update', id, '--ciba-mode', 'ping'])).toMatch(
      /backchannel_client_notification_endpoint/,
    );
    const ping = await manage([
      'app',
      'update',
      id,
      '--ciba-mode',
      'ping',
      '--ciba-notification-endpoint',
      'https://agent.example/ciba',
    ]);
    expect(ping).toMatchObject({
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: 'https://agent.example/ciba',
    });
    expect(await failure(['app', 'update', id, '--ciba-mode', 'push'])).toMatch(/backchannel_token_delivery_mode/);
    const off = await manage(['app', 'update', id, '--ciba-mode', '', '--ciba-notification-endpoint', '']);
    expect(off).toMatchObject({
      backchannel_token_delivery_mode: null,
      backchannel_client_notification_endpoint: null,
    });
    expect((await manage(['app', 'show', id])).backchannel_token_delivery_mode).toBeNull();
  });
});
