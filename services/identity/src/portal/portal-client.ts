import { createHash, createPublicKey, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Logger } from '@attest/common';
import { hmacHex } from '../domain/crypto';
import type { IdentityContext } from '../routes/context';

/** The portal's own client id: fixed for an IDENTITY_SECRET, so every replica and restart agree on it. */
export const portalClientId = (secret: string) => `app_${hmacHex(secret, 'developer-portal-client').slice(0, 32)}`;

export const PORTAL_APP_NAME = 'Attest developer portal';

export const portalUris = (issuer: string) => ({
  redirectUri: `${issuer}/portal/callback`,
  postLogoutRedirectUri: `${issuer}/portal/signed-out`,
});

type PortalContext = Pick<IdentityContext, 'apps' | 'audit' | 'config' | 'portalClientId'>;

/**
 * The portal is an app of this provider like any other (a public client: code flow with PKCE S256),
 * created at start-up when missing and kept pointing at BASE_URL. People sign in to it through
 * /authorize and /token. An operator may disable it (`pnpm manage app disable`): then nobody can.
 */
export async function ensurePortalClient(ctx: PortalContext, logger: Logger): Promise<void> {
  const { redirectUri, postLogoutRedirectUri } = portalUris(ctx.config.issuer);
  const existing = await ctx.apps.find(ctx.portalClientId);
  if (!existing) {
    try {
      await ctx.apps.insert({
        id: ctx.portalClientId,
        name: PORTAL_APP_NAME,
        secretHash: null,
        tokenEndpointAuthMethod: 'none',
        redirectUris: [redirectUri],
        postLogoutRedirectUris: [postLogoutRedirectUri],
      });
    } catch (err) {
      // another replica created it at the same moment
      if (await ctx.apps.find(ctx.portalClientId)) return;
      throw err;
    }
    logger.info('developer portal registered as an app', { app_id: ctx.portalClientId });
    await ctx.audit.record({
      type: 'app.created',
      actor: { type: 'system', id: 'portal' },
      subject: ctx.portalClientId,
      detail: { name: PORTAL_APP_NAME, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' },
    });
    return;
  }
  if (existing.redirectUris.join() !== redirectUri || existing.postLogoutRedirectUris.join() !== postLogoutRedirectUri)
    await ctx.apps.update(ctx.portalClientId, {
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

/**
 * The code for tokens at this provider's own /token (over HTTP, as any app does), then the id_token
 * checked: signature (one of the published keys), iss, aud, nonce, expiry. Answers the pairwise sub.
 */
export async function exchangeCode(
  ctx: Pick<IdentityContext, 'config' | 'keys' | 'portalClientId'>,
  code: string,
  verifier: string,
  nonce: string,
  fetchFn: typeof fetch = fetch,
): Promise<{ sub: string; idToken: string }> {
  const response = await fetchFn(`${ctx.config.portal.internalUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: portalUris(ctx.config.issuer).redirectUri,
      client_id: ctx.portalClientId,
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
  const key = (await ctx.keys.list()).find((k) => k.kid === kid);
  if (!key) throw new PortalSignInError('the id_token is signed with an unknown key');
  let claims: jwt.JwtPayload;
  try {
    claims = jwt.verify(body.id_token, createPublicKey({ key: key.publicJwk, format: 'jwk' }), {
      algorithms: [key.alg],
      issuer: ctx.config.issuer,
      audience: ctx.portalClientId,
    }) as jwt.JwtPayload;
  } catch (err) {
    throw new PortalSignInError(`the id_token does not verify: ${(err as Error).message}`);
  }
  if (claims.nonce !== nonce || typeof claims.sub !== 'string')
    throw new PortalSignInError('the id_token is not for this sign-in (nonce)');
  return { sub: claims.sub, idToken: body.id_token };
}
