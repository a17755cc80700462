import request from 'supertest';
import { basic, browserFlow, callbackParams, REDIRECT_URI, type IdentityHarness } from './support';

type OpenIdClient = typeof import('openid-client');
export type Client = { app_id: string; client_secret: string };
export type Resource = { resource_id: string; uri: string; introspection_secret: string };

export const TOOLS = 'https://tools.example.com/mcp';
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * What the delegation tests (issue 42) do with openid-client against a listening harness: a person's token
 * for a resource (the browser part, then the code exchanged), an RFC 8693 exchange (genericGrantRequest),
 * an OAuth error's name, and /introspect as a resource server or an app.
 */
export function delegationClient(
  oidc: OpenIdClient,
  world: () => { h: IdentityHarness; issuer: string; user: { username: string; password: string } },
) {
  const configFor = (client: Client) =>
    oidc.discovery(new URL(world().issuer), client.app_id, undefined, oidc.ClientSecretBasic(client.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });

  /** The person signs in to `client` (for `resource`, or none when null); the code exchanged with openid-client. */
  async function signIn(client: Client, scope: string, resource: string | null = TOOLS) {
    const { h, user } = world();
    const config = await configFor(client);
    const verifier = oidc.randomPKCECodeVerifier();
    const res = await browserFlow(
      request.agent(h.publicApp),
      {
        response_type: 'code',
        client_id: client.app_id,
        redirect_uri: REDIRECT_URI,
        scope,
        ...(resource ? { resource } : {}),
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: 'st',
      },
      user,
    );
    const callback = new URL(`${REDIRECT_URI}?${new URLSearchParams(callbackParams(res)).toString()}`);
    return oidc.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier: verifier, expectedState: 'st' },
      resource ? { resource } : undefined,
    );
  }

  /** RFC 8693 §2.1 with openid-client. */
  const exchange = async (client: Client, subjectToken: string, extra: Record<string, string> = {}) =>
    oidc.genericGrantRequest(await configFor(client), TOKEN_EXCHANGE, {
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN,
      ...extra,
    });

  /** The OAuth error a call of openid-client's was refused with. */
  const oauthError = async (promise: Promise<unknown>) => {
    const err = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(oidc.ResponseBodyError);
    return (err as InstanceType<OpenIdClient['ResponseBodyError']>).error;
  };

  /** POST /introspect with Basic credentials: a resource server's (resource_id) or an app's (app_id). */
  const introspectAs = (id: string, secret: string, token: string) =>
    request(world().h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(id, secret))
      .type('form')
      .send({ token });

  return { configFor, signIn, exchange, oauthError, introspectAs };
}
