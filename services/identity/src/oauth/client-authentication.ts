import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, checkCredential, clientAddress, constantTimeEqual, errors, formBody } from '@attest/common';
import { APP_ID, hashClientSecret, isClientId } from '../kernel/ids';
import { clientJwtProblem, decodeClientJwt } from './client-jwt';
import { sha256 } from '../kernel/crypto';
import { fapi2AlgorithmProblem } from '../kernel/app-profile';
import type { App } from '../kernel/app-store';
import type { KernelServices, TokenServices } from '../kernel/services';
import type { OAuthServices } from './services';
import type Joi from 'joi';
import { checkForm, repeatedField } from '../kernel/form-check';
import { refuseBlockedClient } from '../kernel/failure-limits';
import { noStore, requireFormContentType } from '../kernel/http-steps';

/** What authenticates an app at /token, /par, /introspect and /revoke (secrets, private_key_jwt, public clients). */
export type ClientAuthDeps = Pick<KernelServices, 'apps' | 'cache' | 'config' | 'limits'> &
  Pick<TokenServices, 'tokens'> &
  Pick<OAuthServices, 'clientKeys'>;

export const parseForm = (limit: string) => formBody(limit);

/** A form field as one string; a field sent twice is refused. */
export function field(req: Request, name: string): string | undefined {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(value)) throw repeatedField(name);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export const authenticatedApp = (res: Response): App => res.locals.app as App;

/**
 * Verifies an app's client credentials in constant time; unknown apps cost the same. The app is looked up
 * first; the comparison then runs under the credential failure limits in one tick with their check and
 * count (checkCredential), so parallel wrong secrets are never compared beyond the limits. The app, or
 * the error to answer with (401 with the RateLimit fields, or 429).
 */
export async function verifyClient(
  ctx: ClientAuthDeps,
  clientId: string,
  secret: string,
  res: Response,
): Promise<App | AppError> {
  const app = APP_ID.test(clientId) ? await ctx.apps.find(clientId) : null;
  const valid = () => {
    const presented = hashClientSecret(ctx.config.secret, secret);
    // a public client has no secret: compare against the placeholder too, and never accept
    const matches = hashesEqual(presented, app?.secretHash ?? hashClientSecret(ctx.config.secret, 'sk_unknown-app'));
    return app !== null && app.secretHash !== null && matches && !app.disabledAt;
  };
  const failure = checkCredential(ctx.limits.credentials, res, valid, invalidAppCredentials);
  return failure ? await failure : app!;
}

/** A keyed hash's hex digest (HMAC-SHA-256: 64 digits, a length everyone knows). */
const HEX_DIGEST = /^[0-9a-f]{64}$/;

/**
 * Two secrets' keyed hashes compared in constant time: digests of the one known length as they are
 * (timingSafeEqual), anything else through constantTimeEqual, which hashes both first so that no length
 * leaks. Two SHA-256 per request fewer than constantTimeEqual alone (issue 42's profile of /token).
 */
function hashesEqual(presented: string, stored: string): boolean {
  if (!HEX_DIGEST.test(presented) || !HEX_DIGEST.test(stored)) return constantTimeEqual(presented, stored);
  return timingSafeEqual(Buffer.from(presented, 'hex'), Buffer.from(stored, 'hex'));
}

/** RFC 7523 §2.2: the client_assertion_type of private_key_jwt. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/**
 * The longest life accepted for a client assertion (its jti is remembered that long): an hour, the lifetime
 * Authlib's PrivateKeyJWT gives its assertions by default; five minutes for an app of the FAPI 2.0 profile.
 */
export const CLIENT_ASSERTION_MAX_SECONDS = 3600;
export const FAPI2_CLIENT_ASSERTION_MAX_SECONDS = 300;

/**
 * private_key_jwt (RFC 7523 §2.2, OpenID Connect Core §9): a JWT the app signed with one of its keys
 * (`jwks` or `jwks_uri`), iss = sub = its client_id, aud = our issuer, short-lived, with a jti used once
 * (remembered in the shared cache until it expires, so no replica accepts it again). The key is found
 * first (it may be fetched); the signature and claims are then checked under the credential failure
 * limits, in one tick with their check and count, like a client secret.
 */
export async function verifyClientAssertion(
  ctx: ClientAuthDeps,
  assertion: string,
  formClientId: string | undefined,
  res: Response,
): Promise<App | AppError> {
  const decoded = decodeClientJwt(assertion);
  const clientId = decoded?.payload.sub;
  const app =
    typeof clientId === 'string' && APP_ID.test(clientId) && (formClientId === undefined || formClientId === clientId)
      ? await ctx.apps.find(clientId)
      : null;
  const usable = app !== null && app.tokenEndpointAuthMethod === 'private_key_jwt' && !app.disabledAt;
  const key = usable && decoded ? await ctx.clientKeys.key(app, decoded.kid, decoded.alg) : null;
  const nowSeconds = Math.floor(ctx.tokens.now() / 1000);
  let problem: string | null = null;
  const valid = () => {
    if (!decoded) problem = 'client_assertion must be a JWT signed with RS256, PS256 or ES256.';
    else if (!usable) problem = 'the client_assertion names no app that authenticates with private_key_jwt.';
    else
      problem =
        fapi2AlgorithmProblem(app.profile, decoded.alg, 'its client assertions') ??
        clientJwtProblem(decoded, key, {
          issuer: app.id,
          // FAPI 2.0 (§5.3.2.1): the issuer only; other apps may name the token endpoint, as Core §9 says
          audiences: app.profile === 'fapi2' ? [ctx.config.issuer] : [ctx.config.issuer, `${ctx.config.issuer}/token`],
          nowSeconds,
          maxLifetimeSeconds:
            app.profile === 'fapi2' ? FAPI2_CLIENT_ASSERTION_MAX_SECONDS : CLIENT_ASSERTION_MAX_SECONDS,
          requireJti: true,
        });
    return problem === null;
  };
  const failure = checkCredential(ctx.limits.credentials, res, valid, () =>
    errors.unauthenticated(`Invalid client_assertion: ${problem ?? 'refused.'}`, BASIC_CHALLENGE),
  );
  if (failure) return await failure;
  const { jti, exp } = decoded!.payload as { jti: string; exp: number };
  const ttlMs = (Math.max(exp - nowSeconds, 0) + 60) * 1000;
  if (!(await ctx.cache.setIfAbsent(`client-assertion:${sha256(`${app!.id}:${jti}`)}`, '1', ttlMs)))
    return errors.unauthenticated('Invalid client_assertion: this jti was used before.', BASIC_CHALLENGE);
  return app!;
}

/** A public client (token_endpoint_auth_method none) identifies itself by client_id alone. */
async function publicClient(ctx: Pick<KernelServices, 'apps'>, clientId: string, from: string): Promise<App | null> {
  // a metadata document that cannot be used is an unknown client here (/authorize's page says why)
  const app = isClientId(clientId) ? await ctx.apps.find(clientId, from).catch(() => null) : null;
  return app && app.public && !app.disabledAt ? app : null;
}

const BASIC_CHALLENGE = 'Basic realm="attest", charset="UTF-8"';

export const missingAppCredentials = () =>
  errors.unauthenticated('Please provide your app authentication credentials.', BASIC_CHALLENGE);
export const invalidAppCredentials = () =>
  errors.unauthenticated('Invalid authentication credentials.', BASIC_CHALLENGE);

/**
 * The client id and secret of a Basic header, read as passport-http 0.3's Basic strategy read them (which
 * this replaces: its per-request strategy objects and callbacks were a share of /introspect's profile):
 * the second space-separated part decoded from base64 and split at colons, the first two parts taken;
 * a header without them, or with an empty id or secret, is refused. RFC 6749 §2.3.1: the credentials were
 * form-encoded before the Basic encoding, so each is decoded (kept raw when that fails).
 */
export function basicCredentials(header: string): { clientId: string; secret: string } | null {
  const parts = header.split(' ');
  if (parts.length < 2) return null;
  const credentials = Buffer.from(parts[1], 'base64').toString().split(':');
  if (credentials.length < 2 || !credentials[0] || !credentials[1]) return null;
  let clientId = credentials[0];
  let secret = credentials[1];
  try {
    clientId = decodeURIComponent(clientId.replace(/\+/g, ' '));
    secret = decodeURIComponent(secret.replace(/\+/g, ' '));
  } catch {
    // keep the raw values
  }
  return { clientId, secret };
}

/** Whether the request authenticates its app with a client assertion (private_key_jwt) rather than a header. */
export const hasClientAssertion = (req: Request): boolean =>
  (req.body as Record<string, unknown> | undefined)?.client_assertion !== undefined;

/**
 * App authentication: private_key_jwt (a client_assertion in the form, wherever apps authenticate),
 * client_secret_basic (the Basic header) or client_secret_post; with `allowPublic`, a
 * public client's client_id alone (`none`: its proof is the PKCE verifier the exchange requires).
 * `allowPost` is false where SPEC asks for the Basic header only. A client_id given twice in the form is
 * refused first, whichever way the app authenticates. Wrong credentials count against the failure limits
 * (refuseBlockedClient runs first, verifyClient counts); a missing or malformed header does not.
 */
export function authenticateApp(
  ctx: ClientAuthDeps,
  options: { allowPost: boolean; allowPublic?: boolean },
): RequestHandler {
  const basic = async (req: Request, res: Response, next: NextFunction, header: string) => {
    const credentials = basicCredentials(header);
    if (!credentials) return next(invalidAppCredentials());
    const app = await verifyClient(ctx, credentials.clientId, credentials.secret, res);
    if (app instanceof AppError) return next(app);
    const bodyClientId = field(req, 'client_id');
    if (bodyClientId && bodyClientId !== app.id) return next(invalidAppCredentials());
    res.locals.app = app;
    next();
  };
  const assertion = async (req: Request, res: Response, next: NextFunction) => {
    const clientAssertion = field(req, 'client_assertion');
    if (field(req, 'client_assertion_type') !== JWT_BEARER_ASSERTION || !clientAssertion)
      return next(
        errors.unauthenticated(
          `client_assertion_type must be ${JWT_BEARER_ASSERTION}, with a client_assertion.`,
          BASIC_CHALLENGE,
        ),
      );
    if (field(req, 'client_secret')) return next(invalidAppCredentials());
    const app = await verifyClientAssertion(ctx, clientAssertion, field(req, 'client_id'), res);
    if (app instanceof AppError) return next(app);
    res.locals.app = app;
    next();
  };
  const post = async (req: Request, res: Response, next: NextFunction) => {
    const clientId = field(req, 'client_id');
    const secret = field(req, 'client_secret');
    if (options.allowPublic && clientId && !secret) {
      const app = await publicClient(ctx, clientId, clientAddress(req));
      if (!app) return next(missingAppCredentials());
      res.locals.app = app;
      return next();
    }
    if (!options.allowPost || !clientId || !secret) return next(missingAppCredentials());
    const app = await verifyClient(ctx, clientId, secret, res);
    if (app instanceof AppError) return next(app);
    res.locals.app = app;
    next();
  };
  return (req: Request, res: Response, next: NextFunction) => {
    field(req, 'client_id');
    const header = req.get('authorization');
    const body = req.body as Record<string, unknown> | undefined;
    if (body?.client_assertion !== undefined || body?.client_assertion_type !== undefined) {
      // one method per request (RFC 6749 §2.3): an assertion beside a Basic header is refused
      return header ? next(invalidAppCredentials()) : assertion(req, res, next);
    }
    if (!header) return post(req, res, next);
    if (!/^Basic\s/i.test(header)) return next(invalidAppCredentials());
    return basic(req, res, next, header);
  };
}

/** SPEC: the Basic header; or, for a private_key_jwt app, a client_assertion in the form. */
const requireAuthorizationHeader = (req: Request, _res: Response, next: NextFunction) =>
  next(req.get('authorization') || hasClientAssertion(req) ? undefined : missingAppCredentials());

/**
 * The steps in front of POST /introspect and POST /revoke, which authenticate the app alike: no-store →
 * form content type → the form → its token → the Authorization header (or a client assertion) → failure
 * limits → credentials (never client_secret_post). With `allowPublic` (/revoke: RFC 7009 §2.1 lets a public
 * client revoke its own tokens), a public client's client_id in the form is enough.
 */
export const appAuthenticatedTokenForm = (
  ctx: ClientAuthDeps,
  form: Joi.ObjectSchema,
  options: { allowPublic?: boolean } = {},
): RequestHandler[] => [
  noStore,
  requireFormContentType,
  parseForm(ctx.config.BODY_LIMIT),
  checkForm(form, ['token']),
  ...(options.allowPublic ? [] : [requireAuthorizationHeader]),
  refuseBlockedClient(ctx.limits),
  authenticateApp(ctx, { allowPost: false, allowPublic: options.allowPublic }),
];
