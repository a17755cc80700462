import type { NextFunction, Request, Response } from 'express';
import { checkCredential, constantTimeEqual, errors, sendJson } from '@attest/common';
import type { AccessTokenClaims, TokenService } from '../kernel/tokens';
import type { IdentityLimits } from '../kernel/failure-limits';
import type { ResourceDirectory } from './resource-directory';
import { hashResourceSecret, RESOURCE_ID } from './resource-admin';
import { issuedToThisResource } from './resource-grants';
import type { Revocations } from '../kernel/revocations';

/** What a resource server's /introspect uses. */
export interface ResourceIntrospectionDeps {
  config: { secret: string };
  limits: Pick<IdentityLimits, 'credentials'>;
  tokens: Pick<TokenService, 'verifyAccessToken'>;
  resources: Pick<ResourceDirectory, 'find'>;
  /** A resource deleted: the tokens of its uri issued before (issuedToThisResource). */
  revocations: Pick<Revocations, 'revokedBeforeIssue'>;
  /** Whether the grant behind the token still holds (its session, app, person and consent). */
  active(claims: AccessTokenClaims): Promise<boolean>;
}

const BASIC_CHALLENGE = 'Basic realm="attest", charset="UTF-8"';

/** The Basic header's user name and password, or null (as basicCredentials reads them). */
function basicOf(header: string | undefined): { id: string; secret: string } | null {
  if (!header || !/^Basic\s/i.test(header)) return null;
  const [id, secret] = Buffer.from(header.split(' ')[1] ?? '', 'base64')
    .toString()
    .split(':');
  return id && secret ? { id, secret } : null;
}

/**
 * POST /introspect by a resource server (issue 41): its resource_id and introspection secret in the Basic
 * header. It learns about tokens for it: RFC 7662 §2.2, so anything else — malformed, forged, expired,
 * revoked, no longer granted, or for another audience — is 200 {"active": false}; only its own failed
 * authentication is 401. A request whose Basic user is not a resource_id goes on to the app's introspection.
 */
export function resourceIntrospection(deps: ResourceIntrospectionDeps) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const credentials = basicOf(req.get('authorization'));
    if (!credentials || !RESOURCE_ID.test(credentials.id)) return next();
    const resource = await deps.resources.find(credentials.id);
    const presented = hashResourceSecret(deps.config.secret, credentials.secret);
    const failure = checkCredential(
      deps.limits.credentials,
      res,
      () =>
        constantTimeEqual(presented, resource?.secretHash ?? hashResourceSecret(deps.config.secret, 'rs_unknown')) &&
        !!resource,
      () => errors.unauthenticated('Invalid authentication credentials.', BASIC_CHALLENGE),
    );
    if (failure) return next(await failure);
    const token = (req.body as Record<string, unknown>).token as string;
    const result = await deps.tokens.verifyAccessToken(token);
    if (
      !result.ok ||
      result.claims.aud !== resource!.uri ||
      // one issued before a resource of this uri was deleted is not this resource's (a security review)
      !issuedToThisResource(deps.revocations, resource!, result.claims.iat) ||
      !(await deps.active(result.claims))
    )
      return sendJson(res, { active: false });
    const { claims } = result;
    sendJson(res, {
      active: true,
      iss: claims.iss,
      aud: claims.aud,
      client_id: claims.client_id,
      ...(claims.sub === undefined ? {} : { sub: claims.sub }),
      scope: claims.scope,
      exp: claims.exp,
      iat: claims.iat,
      jti: claims.jti,
      ...(claims.cnf ? { token_type: 'DPoP', cnf: { jkt: claims.cnf.jkt } } : { token_type: 'Bearer' }),
      ...(claims.acr === undefined ? {} : { acr: claims.acr }),
      ...(claims.amr === undefined ? {} : { amr: claims.amr }),
      ...(claims.auth_time === undefined ? {} : { auth_time: claims.auth_time }),
      // RFC 8693 §4.1 (issue 42): a delegated token names the agent acting for sub
      ...(claims.act ? { act: claims.act } : {}),
    });
  };
}
