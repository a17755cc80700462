import { createHash, createPublicKey, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { hmacHex } from '../kernel/crypto';
import type { PortalDeps, PortalServices } from './portal-deps';

/** The portal's own client id: fixed for an IDENTITY_SECRET, so every replica and restart agree on it. */
export const portalClientId = (secret: string) => `app_${hmacHex(secret, 'developer-portal-client').slice(0, 32)}`;

export const PORTAL_APP_NAME = 'Attest developer portal';

export const portalUris = (issuer: string) => ({
  redirectUri: `${issuer}/portal/callback`,
  postLogoutRedirectUri: `${issuer}/portal/signed-out`,
});

/** What registering the portal as an app takes. */
export type PortalClientDeps = Pick<PortalDeps, 'config' | 'logger' | 'apps' | 'audit'> &
  Pick<PortalServices, 'clientId'>;

/**
 * The portal is an app of this provider like any other (a public client: code flow with PKCE S256),
 * created at start-up when missing and kept pointing at BASE_URL. People sign in to it through
 * /authorize and /token. An operator may disable it (`pnpm manage app disable`): then nobody can.
 */
export async function ensurePortalClient(deps: PortalClientDeps): Promise<void> {
  const { config, logger, apps, audit, clientId } = deps;
  const { redirectUri, postLogoutRedirectUri } = portalUris(config.issuer);
  const existing = await apps.find(clientId);
  if (!existing) {
    try {
      await apps.insert({
        id: clientId,
        name: PORTAL_APP_NAME,
        secretHash: null,
        tokenEndpointAuthMethod: 'none',
        redirectUris: [redirectUri],
        postLogoutRedirectUris: [postLogoutRedirectUri],
      });
    } catch (err) {
      // another replica created it at the same moment
      if (await apps.find(clientId)) return;
      throw err;
    }
    logger.info('developer portal registered as an app', { app_id: clientId });
    await audit.record({
      type: 'app.created',
      actor: { type: 'system', id: 'portal' },
      subject: clientId,
      detail: { name: PORTAL_APP_NAME, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' },
    });
    return;
  }
  if (existing.redirectUris.join() !== redirectUri || existing.postLogoutRedirectUris.join() !== postLogoutRedirectUri)
    await apps.update(clientId, {
      redirectUris: [redirectUri],
      postLogoutRedirectUris: [postLogoutRedirectUri],
    });
}

const base64url = (buf: Buffer) => buf.toString('base64url');

/** A sign-in on its way: PKCE verifier, nonce, state. */
export function newSignIn() {
  const verifier = base64url(randomBytes(32));
  return {
    state: base64url(randomBytes(24)),
    nonce: base64url(randomBytes(24)),
    verifier,
    challenge: base64url(createHash('sha256').update(verifier).digest()),
  };
}

export class PortalSignInError extends Error {}

/** What the portal's code exchange takes: its client id and HTTP client, the published keys. */
export type CodeExchangeDeps = Pick<PortalDeps, 'config' | 'keys'> & Pick<PortalServices, 'clientId' | 'fetch'>;

/**
 * The code for tokens at this provider's own /token (over HTTP, as any app does), then the id_token
 * checked: signature (one of the published keys), iss, aud, nonce, expiry. Answers the pairwise sub.
 */
export async function exchangeCode(
  deps: CodeExchangeDeps,
  code: string,
  verifier: string,
  nonce: string,
): Promise<{ sub: string; idToken: string }> {
  const { config, keys, clientId, fetch: fetchFn } = deps;
  const response = await fetchFn(`${config.portal.internalUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: portalUris(config.issuer).redirectUri,
      client_id: clientId,
      code_verifier: verifier,
    }).toString(),
    signal: AbortSignal.timeout(10000),
  }).catch((err: Error) => {
    throw new PortalSignInError(`the token endpoint cannot be reached (PORTAL_INTERNAL_URL): ${err.message}`);
  });
  const body = (await response.json().catch(() => ({}))) as { id_token?: string; error?: string };
  if (!response.ok || !body.id_token)
    throw new PortalSignInError(`the token endpoint answered ${response.status} ${body.error ?? ''}`.trim());
  const decoded = jwt.decode(body.id_token, { complete: true });
  const kid = decoded?.header.kid;
  const key = (await keys.list()).find((k) => k.kid === kid);
  if (!key) throw new PortalSignInError('the id_token is signed with an unknown key');
  let claims: jwt.JwtPayload;
  try {
    claims = jwt.verify(body.id_token, createPublicKey({ key: key.publicJwk, format: 'jwk' }), {
      algorithms: [key.alg],
      issuer: config.issuer,
      audience: clientId,
    }) as jwt.JwtPayload;
  } catch (err) {
    throw new PortalSignInError(`the id_token does not verify: ${(err as Error).message}`);
  }
  if (claims.nonce !== nonce || typeof claims.sub !== 'string')
    throw new PortalSignInError('the id_token is not for this sign-in (nonce)');
  return { sub: claims.sub, idToken: body.id_token };
}
