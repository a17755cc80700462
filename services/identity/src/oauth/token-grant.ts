import type { Request, Response } from 'express';
import { AppError } from '@attest/common';
import type { App } from '../kernel/app-store';
import { repeatedField } from '../kernel/form-check';
import { oneResourceOnly } from '../resources';
import { DpopError, dpopAlgorithmsOf, dpopHeader, type DpopProofs } from './dpop';

/**
 * What every grant at POST /token shares once the app is authenticated: reading one form field, and the
 * DPoP proof that binds the tokens (RFC 9449 §5). The code exchange, refresh_token, client_credentials and
 * the device and token-exchange grants all use these, so a rule about either is written once.
 */
export interface TokenGrantDeps {
  config: { issuer: string };
  dpop: Pick<DpopProofs, 'nonce' | 'verify'>;
}

/**
 * One form field's value (absent or empty: undefined). A repeated field is refused: `resource` with
 * invalid_target (a token has one audience, RFC 8707), any other with invalid_request.
 */
export function grantField(req: Request, name: string): string | undefined {
  const value = (req.body as Record<string, unknown>)[name];
  if (Array.isArray(value)) {
    if (name === 'resource') throw new AppError('invalid_target', 400, oneResourceOnly().description, 'resource');
    throw repeatedField(name);
  }
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The DPoP proof of a /token request, checked for this app (a fapi2 app's proofs are PS256, ES256 or EdDSA
 * only): the key's thumbprint when a proof came, undefined when none did. An app with
 * dpop_bound_access_tokens must send one. Every answer to a request with a proof carries a fresh DPoP-Nonce.
 */
export async function tokenDpopJkt(
  deps: TokenGrantDeps,
  req: Request,
  res: Response,
  app: Pick<App, 'profile' | 'dpopBoundAccessTokens'>,
): Promise<string | undefined> {
  const header = dpopHeader(req);
  if (header === undefined) {
    if (!app.dpopBoundAccessTokens) return undefined;
    throw new AppError(
      'invalid_request',
      400,
      'This app requires a DPoP proof (DPoP header) at the token endpoint.',
      'DPoP',
    );
  }
  res.set('DPoP-Nonce', deps.dpop.nonce());
  try {
    const proof = await deps.dpop.verify(header, {
      htm: 'POST',
      htu: `${deps.config.issuer}/token`,
      ...dpopAlgorithmsOf(app),
    });
    return proof.jkt;
  } catch (err) {
    if (!(err instanceof DpopError)) throw err;
    throw new AppError(err.error, 400, err.description, 'DPoP');
  }
}
