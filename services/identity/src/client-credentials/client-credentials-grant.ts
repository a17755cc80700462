import type { Request, Response } from 'express';
import { AppError, sendJson } from '@attest/common';
import type { App } from '../kernel/app-store';
import type { TokenService } from '../kernel/tokens';
import { grantField, tokenDpopJkt, type TokenGrantDeps } from '../oauth';
import { RESERVED_SCOPES, type ResourceDirectory } from '../resources';

/** What grant_type=client_credentials at /token uses. */
export interface ClientCredentialsDeps extends TokenGrantDeps {
  tokens: Pick<TokenService, 'accessToken' | 'accessTokenTtl'>;
  resources: Pick<ResourceDirectory, 'findByUri'>;
}

/**
 * POST /token grant_type=client_credentials (RFC 6749 §4.4; issue 41): a confidential app acting as itself,
 * no person, at a resource whose machine clients the operator named it among (unauthorized_client otherwise). The token is for one registered resource (`resource`, required: RFC 9068 `aud`), with the
 * scopes of `scope` the resource offers (all it offers when `scope` is absent); `sub` is the app's client_id.
 * A resource that asks for a verification level needs a person, which this grant has not (invalid_target).
 */
export function clientCredentialsGrant(deps: ClientCredentialsDeps) {
  return async (req: Request, res: Response) => {
    const app = res.locals.app as App;
    if (app.public)
      throw new AppError(
        'unauthorized_client',
        400,
        'A public client cannot use client_credentials: it has no credentials of its own.',
        'grant_type',
      );
    const uri = grantField(req, 'resource');
    if (!uri)
      throw new AppError(
        'invalid_target',
        400,
        'client_credentials needs resource: the uri of a resource registered here (RFC 8707).',
        'resource',
      );
    const resource = uri.length <= 2000 ? await deps.resources.findByUri(uri) : null;
    if (!resource) throw new AppError('invalid_target', 400, 'resource names no resource registered here.', 'resource');
    // the operator names the apps that may act as themselves at each resource: no other app gets a token for it
    if (!resource.machineClients.includes(app.id))
      throw new AppError(
        'unauthorized_client',
        400,
        `This app may not get tokens for ${resource.uri} as itself: the operator adds it to the resource's machine ` +
          `clients (pnpm manage resource update ${resource.id} --machine-client ${app.id}).`,
        'resource',
      );
    if (resource.minVerificationLevel)
      throw new AppError(
        'invalid_target',
        400,
        `The resource ${resource.uri} requires a person verified at level ${resource.minVerificationLevel}; ` +
          'client_credentials has no person.',
        'resource',
      );
    const scope = grantField(req, 'scope');
    const asked = scope === undefined ? resource.scopes : [...new Set(scope.split(' ').filter(Boolean))];
    const unknown = asked.find((s) => RESERVED_SCOPES.includes(s) || !resource.scopes.includes(s));
    if (unknown !== undefined)
      throw new AppError(
        'invalid_scope',
        400,
        `The resource ${resource.uri} does not offer the scope ${unknown}` +
          (resource.scopes.length ? ` (it offers: ${resource.scopes.join(' ')}).` : ' (it offers none).'),
        'scope',
      );
    const jkt = await tokenDpopJkt(deps, req, res, app);
    const { token, claims } = await deps.tokens.accessToken({
      sub: app.id,
      clientId: app.id,
      scopes: resource.scopes.filter((s) => asked.includes(s)),
      aud: resource.uri,
      ...(jkt ? { jkt } : {}),
      // signed as the app's other access tokens (PS256 or ES256 for a fapi2 app)
      alg: app.accessTokenSignedResponseAlg,
    });
    sendJson(res, {
      access_token: token,
      token_type: jkt ? 'DPoP' : 'Bearer',
      expires_in: deps.tokens.accessTokenTtl,
      scope: claims.scope,
    });
  };
}

/** A client_credentials token: no person behind it, its subject is its app. */
export const isClientToken = (claims: { sub: string; client_id: string }): boolean => claims.sub === claims.client_id;
