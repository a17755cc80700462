import { type AuditActor, type AuditLog, type Logger, errors, outboundUrlProblem, validate } from '@attest/common';
import type { IdentityConfig } from '../config';
import type { AppDirectory } from '../kernel/directories';
import { settingsUnderProfile, type AppProfile, type ProfileSettings } from '../kernel/app-profile';
import { clientJwksProblem } from '../oauth';
import { hashClientSecret, newAppId, newClientSecret } from '../kernel/ids';
import type {
  App,
  AppUpdate,
  BackchannelDeliveryMode,
  ClientJwks,
  SigningAlg,
  TokenEndpointAuthMethod,
} from '../kernel/app-store';
import type { VerificationLevel } from '../kernel/user-store';
import { createAppSchema, updateAppSchema } from './admin-schemas';

/**
 * The app operations of the admin API and the developer portal (issue 27): the same checks, the same
 * audit events, whoever acts (an operator's token, or a person signed in to the portal).
 */
export interface AppAdminDeps {
  config: IdentityConfig;
  logger: Logger;
  audit: Pick<AuditLog, 'record'>;
  apps: AppDirectory;
}

const publicClientHasNoSecret = () =>
  errors.conflict(
    'public_client',
    'This app is a public client (token_endpoint_auth_method none): it has no secret.',
    'app_id',
  );

/** 'none' (or null) is no minimum. */
const minLevel = (value: string | null | undefined): VerificationLevel | null | undefined =>
  value === undefined ? undefined : value === null || value === 'none' ? null : (value as VerificationLevel);

const noApp = () => errors.notFound('No app with this app_id.', 'app_id');

/**
 * backchannel_logout_uri through the shared outbound guard, at registration: https (plain http only in
 * the embedded mode), and a host written as an IP address must be public unless
 * BACKCHANNEL_LOGOUT_ALLOW_PRIVATE allows it (a host name is checked, and pinned, at each delivery).
 */
function checkBackchannelUri(deps: AppAdminDeps, uri: string | null | undefined): void {
  const problem = uri ? outboundUrlProblem(uri, 'backchannel_logout_uri', deps.config.outbound) : null;
  if (problem) throw errors.invalidParameter('backchannel_logout_uri', problem);
}

/**
 * CIBA (issue 42): the notification endpoint through the outbound guard, as backchannel_logout_uri; the ping
 * mode needs one, and a public client cannot use CIBA (it has no credentials to authenticate /bc-authorize).
 */
function checkCiba(
  deps: AppAdminDeps,
  settings: { mode: string | null; endpoint: string | null; public: boolean },
): void {
  const problem = settings.endpoint
    ? outboundUrlProblem(settings.endpoint, 'backchannel_client_notification_endpoint', deps.config.outbound)
    : null;
  if (problem) throw errors.invalidParameter('backchannel_client_notification_endpoint', problem);
  if (settings.mode === 'ping' && !settings.endpoint)
    throw errors.invalidParameter(
      'backchannel_client_notification_endpoint',
      'The ping mode needs backchannel_client_notification_endpoint: where the outcome is announced.',
    );
  if (settings.mode && settings.public)
    throw errors.invalidParameter(
      'backchannel_token_delivery_mode',
      'A public client (token_endpoint_auth_method none) cannot use CIBA: it cannot authenticate at /bc-authorize.',
    );
}

const SECRET_METHODS: TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/** The settings a profile fixes, as given in a create or update body (absent ones left out). */
interface ProfileFields {
  token_endpoint_auth_method?: string;
  require_pushed_authorization_requests?: boolean;
  dpop_bound_access_tokens?: boolean;
  id_token_signed_response_alg?: string;
  access_token_signed_response_alg?: string;
  redirect_uris?: string[];
}
/** `sent`: the body as sent, so a schema default (client_secret_basic, false) does not count as given. */
const givenSettings = (body: ProfileFields, sent: unknown = body): Partial<ProfileSettings> => {
  const was = (field: keyof ProfileFields) =>
    typeof sent === 'object' && sent !== null && (sent as Record<string, unknown>)[field] !== undefined;
  const given: Partial<ProfileSettings> = {
    tokenEndpointAuthMethod: was('token_endpoint_auth_method')
      ? (body.token_endpoint_auth_method as TokenEndpointAuthMethod)
      : undefined,
    requirePushedAuthorizationRequests: body.require_pushed_authorization_requests,
    dpopBoundAccessTokens: was('dpop_bound_access_tokens') ? body.dpop_bound_access_tokens : undefined,
    idTokenSignedResponseAlg: body.id_token_signed_response_alg as SigningAlg | undefined,
    accessTokenSignedResponseAlg: body.access_token_signed_response_alg as SigningAlg | undefined,
    redirectUris: body.redirect_uris,
  };
  return Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
};
const PROFILE_FIELDS: (keyof ProfileFields | 'profile')[] = [
  'profile',
  'token_endpoint_auth_method',
  'require_pushed_authorization_requests',
  'dpop_bound_access_tokens',
  'id_token_signed_response_alg',
  'access_token_signed_response_alg',
  'redirect_uris',
];
/** An app's security settings as the admin API and the audit trail show them (in this order). */
export const securitySettingsJson = (app: App) => ({
  require_pushed_authorization_requests: app.requirePushedAuthorizationRequests,
  id_token_signed_response_alg: app.idTokenSignedResponseAlg,
  access_token_signed_response_alg: app.accessTokenSignedResponseAlg,
  dpop_bound_access_tokens: app.dpopBoundAccessTokens,
  min_verification_level: app.minVerificationLevel,
  device_authorization_grant: app.deviceAuthorizationGrant,
  profile: app.profile,
  may_act_for_users: app.mayActForUsers,
});

/** What a profile set on an app decided, for the audit trail. */
const profileDetail = (app: App) => ({
  token_endpoint_auth_method: app.tokenEndpointAuthMethod,
  require_pushed_authorization_requests: app.requirePushedAuthorizationRequests,
  dpop_bound_access_tokens: app.dpopBoundAccessTokens,
  id_token_signed_response_alg: app.idTokenSignedResponseAlg,
  access_token_signed_response_alg: app.accessTokenSignedResponseAlg,
});

/**
 * The app's keys: a JWK Set of public signature keys, or an https jwks_uri through the outbound guard
 * (a host name is checked, and pinned, at each fetch). A private_key_jwt app must have one of them.
 */
function checkKeys(
  deps: AppAdminDeps,
  method: TokenEndpointAuthMethod,
  keys: { jwks: ClientJwks | null | undefined; jwksUri: string | null | undefined },
): void {
  const problem =
    (keys.jwks ? clientJwksProblem(keys.jwks, 'jwks') : null) ??
    (keys.jwksUri ? outboundUrlProblem(keys.jwksUri, 'jwks_uri', deps.config.outbound) : null);
  if (problem) throw errors.invalidParameter(keys.jwks ? 'jwks' : 'jwks_uri', problem);
  if (keys.jwks && keys.jwksUri) throw errors.invalidParameter('jwks', 'Give jwks or jwks_uri, not both.');
  if (method === 'private_key_jwt' && !keys.jwks && !keys.jwksUri)
    throw errors.invalidParameter('jwks', 'A private_key_jwt app needs its public keys: jwks or jwks_uri.');
}

/** Creates an app from an admin API body (createAppSchema); the secret when it has one (shown once). */
export async function createApp(
  deps: AppAdminDeps,
  input: unknown,
  actor: AuditActor,
  extraDetail: Record<string, unknown> = {},
): Promise<{ app: App; secret: string | null }> {
  const body = validate(createAppSchema, input);
  checkBackchannelUri(deps, body.backchannel_logout_uri);
  const profile = body.profile as AppProfile;
  const settings = settingsUnderProfile(profile, givenSettings(body, input), {
    tokenEndpointAuthMethod: 'client_secret_basic',
    requirePushedAuthorizationRequests: false,
    dpopBoundAccessTokens: false,
    idTokenSignedResponseAlg: 'RS256',
    accessTokenSignedResponseAlg: 'RS256',
    redirectUris: body.redirect_uris,
  });
  const method = settings.tokenEndpointAuthMethod;
  checkKeys(deps, method, { jwks: body.jwks as ClientJwks | null | undefined, jwksUri: body.jwks_uri });
  const ciba = {
    mode: (body.backchannel_token_delivery_mode ?? null) as BackchannelDeliveryMode | null,
    endpoint: (body.backchannel_client_notification_endpoint ?? null) as string | null,
  };
  checkCiba(deps, { ...ciba, public: method === 'none' });
  const secret = SECRET_METHODS.includes(method) ? newClientSecret() : null;
  const app = await deps.apps.insert({
    id: newAppId(),
    name: body.name,
    secretHash: secret && hashClientSecret(deps.config.secret, secret),
    redirectUris: body.redirect_uris,
    webOrigins: body.web_origins,
    postLogoutRedirectUris: body.post_logout_redirect_uris,
    backchannelLogoutUri: body.backchannel_logout_uri,
    tokenEndpointAuthMethod: method,
    jwks: body.jwks as ClientJwks | null | undefined,
    jwksUri: body.jwks_uri,
    requirePushedAuthorizationRequests: settings.requirePushedAuthorizationRequests,
    idTokenSignedResponseAlg: settings.idTokenSignedResponseAlg,
    accessTokenSignedResponseAlg: settings.accessTokenSignedResponseAlg,
    dpopBoundAccessTokens: settings.dpopBoundAccessTokens,
    mayActForUsers: body.may_act_for_users,
    minVerificationLevel: minLevel(body.min_verification_level),
    deviceAuthorizationGrant: body.device_authorization_grant,
    profile,
    backchannelTokenDeliveryMode: ciba.mode,
    backchannelClientNotificationEndpoint: ciba.endpoint,
  });
  deps.logger.info('app created', { app_id: app.id, public: app.public });
  await deps.audit.record({
    type: 'app.created',
    actor,
    subject: app.id,
    detail: {
      ...extraDetail,
      name: app.name,
      redirect_uris: app.redirectUris,
      post_logout_redirect_uris: app.postLogoutRedirectUris,
      backchannel_logout_uri: app.backchannelLogoutUri,
      token_endpoint_auth_method: app.tokenEndpointAuthMethod,
      jwks_uri: app.jwksUri,
      ...securitySettingsJson(app),
      ...cibaSettingsJson(app),
    },
  });
  return { app, secret };
}

/** An app's CIBA settings as the admin API and the audit trail show them (issue 42). */
export const cibaSettingsJson = (app: App) => ({
  backchannel_token_delivery_mode: app.backchannelTokenDeliveryMode,
  backchannel_client_notification_endpoint: app.backchannelClientNotificationEndpoint,
});

/** Changes an app from an admin API body (updateAppSchema); a new secret when the change made one. */
export async function updateApp(
  deps: AppAdminDeps,
  id: string,
  input: unknown,
  actor: AuditActor,
  extraDetail: Record<string, unknown> = {},
): Promise<{ app: App; secret: string | null }> {
  const body = validate(updateAppSchema, input);
  checkBackchannelUri(deps, body.backchannel_logout_uri);
  const changes: AppUpdate = {
    ...(body.name === undefined ? {} : { name: body.name }),
    ...(body.redirect_uris === undefined ? {} : { redirectUris: body.redirect_uris }),
    ...(body.web_origins === undefined ? {} : { webOrigins: body.web_origins }),
    ...(body.post_logout_redirect_uris === undefined ? {} : { postLogoutRedirectUris: body.post_logout_redirect_uris }),
    ...(body.backchannel_logout_uri === undefined ? {} : { backchannelLogoutUri: body.backchannel_logout_uri }),
    ...(body.jwks === undefined ? {} : { jwks: body.jwks as ClientJwks | null }),
    ...(body.jwks_uri === undefined ? {} : { jwksUri: body.jwks_uri }),
    ...(body.require_pushed_authorization_requests === undefined
      ? {}
      : { requirePushedAuthorizationRequests: body.require_pushed_authorization_requests }),
    ...(body.id_token_signed_response_alg === undefined
      ? {}
      : { idTokenSignedResponseAlg: body.id_token_signed_response_alg }),
    ...(body.dpop_bound_access_tokens === undefined ? {} : { dpopBoundAccessTokens: body.dpop_bound_access_tokens }),
    ...(body.device_authorization_grant === undefined
      ? {}
      : { deviceAuthorizationGrant: body.device_authorization_grant }),
    ...(body.min_verification_level === undefined
      ? {}
      : { minVerificationLevel: minLevel(body.min_verification_level) }),
    ...(body.may_act_for_users === undefined ? {} : { mayActForUsers: body.may_act_for_users }),
  };
  if (
    body.backchannel_token_delivery_mode !== undefined ||
    body.backchannel_client_notification_endpoint !== undefined
  ) {
    const current = await deps.apps.find(id);
    if (!current) throw noApp();
    const mode = body.backchannel_token_delivery_mode;
    const endpoint = body.backchannel_client_notification_endpoint;
    checkCiba(deps, {
      mode: mode === undefined ? current.backchannelTokenDeliveryMode : (mode as BackchannelDeliveryMode | null),
      endpoint: endpoint === undefined ? current.backchannelClientNotificationEndpoint : endpoint,
      public: current.public,
    });
    if (mode !== undefined) changes.backchannelTokenDeliveryMode = mode as BackchannelDeliveryMode | null;
    if (endpoint !== undefined) changes.backchannelClientNotificationEndpoint = endpoint;
    // CIBA turned off: its ping endpoint goes with it (a later --ciba-mode ping names one again)
    else if (mode === null) changes.backchannelClientNotificationEndpoint = null;
  }
  let secret: string | null = null;
  const keySettings = body.jwks !== undefined || body.jwks_uri !== undefined;
  if (keySettings || PROFILE_FIELDS.some((f) => body[f] !== undefined)) {
    // not a hot path: the settings are checked against the app as it is, under its profile
    const current = await deps.apps.find(id);
    if (!current) throw noApp();
    if (current.public && body.token_endpoint_auth_method !== undefined) throw publicClientHasNoSecret();
    const profile = (body.profile ?? current.profile) as AppProfile;
    const settings = settingsUnderProfile(profile, givenSettings(body), current);
    if (profile !== current.profile) changes.profile = profile;
    for (const k of [
      'requirePushedAuthorizationRequests',
      'dpopBoundAccessTokens',
      'idTokenSignedResponseAlg',
      'accessTokenSignedResponseAlg',
    ] as const)
      if (settings[k] !== current[k]) Object.assign(changes, { [k]: settings[k] });
    const method = settings.tokenEndpointAuthMethod;
    if (keySettings || body.token_endpoint_auth_method !== undefined || method !== current.tokenEndpointAuthMethod)
      checkKeys(deps, method, {
        jwks: body.jwks === undefined ? current.jwks : (body.jwks as ClientJwks | null),
        jwksUri: body.jwks_uri === undefined ? current.jwksUri : body.jwks_uri,
      });
    if (method !== current.tokenEndpointAuthMethod) {
      changes.tokenEndpointAuthMethod = method;
      if (method === 'private_key_jwt') changes.secretHash = null;
      else if (current.secretHash === null) {
        secret = newClientSecret();
        changes.secretHash = hashClientSecret(deps.config.secret, secret);
      }
    }
  }
  const app = await deps.apps.update(id, changes);
  if (!app) throw noApp();
  const { jwks: _jwks, ...detail } = body;
  await deps.audit.record({
    type: 'app.updated',
    actor,
    subject: app.id,
    detail: {
      ...extraDetail,
      changed: Object.keys(body),
      ...detail,
      ...(body.profile === undefined ? {} : { profile_settings: profileDetail(app) }),
    },
  });
  return { app, secret };
}

/** A new client secret (returned once); the old one stops working at once. */
export async function rotateAppSecret(
  deps: AppAdminDeps,
  id: string,
  actor: AuditActor,
  extraDetail: Record<string, unknown> = {},
): Promise<string> {
  const current = await deps.apps.find(id);
  if (current?.public) throw publicClientHasNoSecret();
  if (current?.tokenEndpointAuthMethod === 'private_key_jwt')
    throw errors.conflict(
      'private_key_jwt',
      'This app authenticates with private_key_jwt (its keys): it has no secret. Change token_endpoint_auth_method to get one.',
      'app_id',
    );
  const secret = newClientSecret();
  if (!(await deps.apps.setSecretHash(id, hashClientSecret(deps.config.secret, secret)))) throw noApp();
  deps.logger.info('app secret rotated', { app_id: id });
  await deps.audit.record({ type: 'app.secret_rotated', actor, subject: id, detail: extraDetail });
  return secret;
}

/** Disables (no tokens; its tokens inactive) or enables an app here, in the identity service. */
export async function setAppDisabled(
  deps: AppAdminDeps,
  id: string,
  disabled: boolean,
  actor: AuditActor,
  extraDetail: Record<string, unknown> = {},
): Promise<App> {
  const app = await deps.apps.setDisabled(id, disabled);
  if (!app) throw noApp();
  await deps.audit.record({
    type: disabled ? 'app.disabled' : 'app.enabled',
    actor,
    subject: app.id,
    detail: extraDetail,
  });
  return app;
}
