import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliError } from '../src/admin-client';
import { HelpText, runCli } from '../src/main';
import { ADMIN_TOKEN, identityHarness, type IdentityHarness } from '../../../services/identity/test/support';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed CLI output in a test

/** `pnpm manage resource …` (issue 41, item 1) against the identity admin API. */
describe('pnpm manage resource', () => {
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

  it('has --help for the noun and each command', async () => {
    const noun = (await runCli(['resource', '--help'], {})) as HelpText;
    expect(noun.text).toContain(
      'pnpm manage resource create --uri URI --name NAME [--scope S] [--scope S ...] [--min-verification-level orb|device|none]',
    );
    for (const verb of [
      'list',
      'show RESOURCE_ID',
      'update RESOURCE_ID',
      'delete RESOURCE_ID',
      'rotate-secret RESOURCE_ID',
    ])
      expect(noun.text).toContain(`pnpm manage resource ${verb}`);
    const help = (await runCli(['--help'], {})) as HelpText;
    expect(help.text).toContain('resource');
  });

  it('creates, lists, shows, updates, rotates and deletes a resource; each change is in the audit trail', async () => {
    const created = await manage([
      'resource',
      'create',
      '--uri',
      'https://mcp.example.com/mcp',
      '--name',
      'Example tools',
      '--scope',
      'tools:read',
      '--scope',
      'tools:write',
      '--min-verification-level',
      'device',
    ]);
    expect(created).toMatchObject({
      uri: 'https://mcp.example.com/mcp',
      name: 'Example tools',
      scopes: ['tools:read', 'tools:write'],
      min_verification_level: 'device',
      access_token_alg: 'RS256',
    });
    expect(created.resource_id).toMatch(/^res_[0-9a-f]{32}$/);
    expect(created.introspection_secret).toMatch(/^rs_[0-9a-f]{48}$/);

    const list = await manage(['resource', 'list']);
    expect(list).toEqual([expect.objectContaining({ resource_id: created.resource_id })]);
    expect(JSON.stringify(list)).not.toContain(created.introspection_secret);

    const updated = await manage([
      'resource',
      'update',
      created.resource_id,
      '--scope',
      'tools:read',
      '--min-verification-level',
      'none',
    ]);
    expect(updated).toMatchObject({ scopes: ['tools:read'], min_verification_level: null, name: 'Example tools' });
    expect(await manage(['resource', 'show', created.resource_id])).toMatchObject({ scopes: ['tools:read'] });
    const cleared = await manage(['resource', 'update', created.resource_id, '--no-scopes']);
    expect(cleared.scopes).toEqual([]);
    // RFC 9068 §2.1: the resource chooses its tokens' algorithm
    const es256 = await manage(['resource', 'update', created.resource_id, '--access-token-alg', 'ES256']);
    expect(es256).toMatchObject({ access_token_alg: 'ES256', name: 'Example tools' });
    expect(await failure(['resource', 'update', created.resource_id, '--access-token-alg', 'HS256'])).toContain(
      'access_token_alg',
    );

    const rotated = await manage(['resource', 'rotate-secret', created.resource_id]);
    expect(rotated.introspection_secret).toMatch(/^rs_/);
    expect(rotated.introspection_secret).not.toBe(created.introspection_secret);

    expect(await failure(['resource', 'create', '--uri', 'https://mcp.example.com/mcp', '--name', 'Again'])).toContain(
      'resource_exists',
    );
    expect(await failure(['resource', 'create', '--uri', 'http://example.com/api', '--name', 'Plain'])).toMatch(
      /uri must use https/,
    );
    expect(
      await failure(['resource', 'create', '--uri', 'https://x.example.com', '--name', 'X', '--scope', 'openid']),
    ).toContain('openid is an OpenID Connect scope');

    await manage(['resource', 'delete', created.resource_id]);
    expect(await failure(['resource', 'show', created.resource_id])).toContain('No resource with this resource_id');
    expect(await manage(['resource', 'list'])).toEqual([]);

    const trail = await identity.ctx.kernel.audit.list({
      types: ['resource.created', 'resource.updated', 'resource.secret_rotated', 'resource.deleted'],
      limit: 20,
    });
    expect(
      trail
        .filter((e) => e.subject === created.resource_id)
        .map((e) => e.type)
        .sort(),
    ).toEqual([
      'resource.created',
      'resource.deleted',
      'resource.secret_rotated',
      'resource.updated',
      'resource.updated',
      // --access-token-alg ES256 (the refused HS256 changes nothing)
      'resource.updated',
    ]);
    expect(JSON.stringify(trail)).not.toContain(created.introspection_secret);
  });
});
