import Joi from 'joi';
import {
  commonEnv,
  ConfigError,
  failureLimitEnv,
  loadEnv,
  port,
  publicUrl,
  resolveAdminToken,
  resolveSecret,
  type CommonConfig,
  type FailureLimitConfig,
  type OutboundPolicy,
} from '@attest/common';
import { DEFAULT_PASSWORD_HASH_COST, MAX_PASSWORD_HASH_COST } from './kernel/crypto';

export interface IdentityEnv extends CommonConfig, FailureLimitConfig {
  IDENTITY_PORT: number;
  IDENTITY_ADMIN_PORT: number;
  BASE_URL: string;
  EMAIL_DOMAIN?: string;
  IDENTITY_SECRET?: string;
  KEY_ENCRYPTION_KEY?: string;
  CODE_TTL_SECONDS: number;
  ACCESS_TOKEN_TTL_SECONDS: number;
  ID_TOKEN_TTL_SECONDS: number;
  /** Earlier name of SESSION_MAX_AGE_SECONDS, still read when that is unset. */
  SESSION_TTL_SECONDS?: number;
  SESSION_MAX_AGE_SECONDS?: number;
  SESSION_IDLE_TIMEOUT_SECONDS: number;
  BACKCHANNEL_LOGOUT_ATTEMPTS: number;
  KEY_ROTATION_DAYS: number;
  CODE_FAILURES_PER_CLIENT: number;
  PUBLIC_CODE_FAILURES_PER_CLIENT_AND_ADDRESS: number;
  PUBLIC_CODE_FAILURES_PER_ADDRESS: number;
  SIGNIN_FAILURES_PER_USER_AND_ADDRESS: number;
  SIGNIN_FAILURES_PER_ADDRESS: number;
  PASSKEY_FAILURES_PER_ADDRESS: number;
  SIGNUP_ATTEMPTS_PER_ADDRESS: number;
  SIGNUP_ENABLED?: boolean;
  PASSKEY_RP_ID?: string;
  PASSKEY_RP_NAME: string;
  PASSKEY_CHALLENGE_TTL_SECONDS: number;
  /** How recent a sign-in must be to add or remove a passkey on the account page (seconds). */
  ACCOUNT_REAUTH_SECONDS: number;
  /** The absolute lifetime of a refresh token family (issue 41): rotation never extends it. */
  REFRESH_TOKEN_TTL_SECONDS: number;
  /** RFC 8628 (issue 41): how long a device code and its user code wait for the person (expires_in). */
  DEVICE_CODE_TTL_SECONDS: number;
  /** Wrong user codes typed at /device per client address per window (AUTH_FAILURE_WINDOW_SECONDS). */
  DEVICE_CODE_FAILURES_PER_ADDRESS: number;
  /** The lifetime of a token an agent gets by token exchange (issue 42), never past its subject token's. */
  TOKEN_EXCHANGE_TTL_SECONDS: number;
  /** WebAuthn user verification at passkey sign-in and registration: required (default) or preferred. */
  PASSKEY_USER_VERIFICATION: 'required' | 'preferred';
  /** scrypt cost of new password hashes, as log2 N (17: N = 2^17). */
  PASSWORD_HASH_COST: number;
  /** New sign-in interactions (an /authorize that needs a page) per client address per window. */
  INTERACTIONS_PER_ADDRESS: number;
  /** Back-channel logout may reach private, loopback and link-local addresses (embedded: yes). */
  BACKCHANNEL_LOGOUT_ALLOW_PRIVATE?: boolean;
  /** DPoP (RFC 9449): how far a proof's iat may be from the server's time, either way. */
  DPOP_PROOF_MAX_AGE_SECONDS: number;
  /** DPoP: every proof must carry a server-provided nonce (DPoP-Nonce), for every app. */
  DPOP_NONCE_REQUIRED: boolean;
  /** The developer portal at /portal (issue 27). */
  PORTAL_ENABLED: boolean;
  /** People signed in to the portal may create apps (and become their owner). */
  PORTAL_SELF_SERVICE_APPS: boolean;
  /** Where the portal reaches this service's own /token (default: loopback on IDENTITY_PORT). */
  PORTAL_INTERNAL_URL?: string;
  /** The transactions service's admin API (API keys; default: loopback on TRANSACTIONS_ADMIN_PORT or 4101). */
  TRANSACTIONS_ADMIN_URL?: string;
  TRANSACTIONS_ADMIN_PORT?: number;
  /** Its admin token (default: ADMIN_TOKEN, or the embedded mode's generated one). */
  TRANSACTIONS_ADMIN_TOKEN?: string;
  /** RFC 7591 Dynamic Client Registration at /register: off, open or token (default: open embedded, else off). */
  CLIENT_REGISTRATION?: ClientRegistrationPolicy;
  /** open registration: new registrations per client address per AUTH_FAILURE_WINDOW_SECONDS. */
  REGISTRATIONS_PER_ADDRESS: number;
  /** open registration: a registered client nobody has signed in to is deleted after this many hours. */
  REGISTRATION_UNUSED_HOURS: number;
  /** Client ID Metadata Documents: an https client_id is fetched and used as a public client. */
  CLIENT_ID_METADATA_DOCUMENTS: boolean;
  /**
   * Whether a client that registers itself without an operator (open registration, a metadata document) may
   * use the device flow (RFC 8628): off by default, as a device code is a ready phishing lure (RFC 8628 §5.4).
   */
  CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW: boolean;
}

/** Who may register a client at /register (issue 41). */
export type ClientRegistrationPolicy = 'off' | 'open' | 'token';

export interface IdentityConfig extends IdentityEnv {
  /** Keys pairwise subjects and hashes secrets; from IDENTITY_SECRET or generated (embedded). */
  secret: string;
  /** Encrypts private signing keys at rest; from KEY_ENCRYPTION_KEY or generated (embedded). */
  keyEncryptionKey: string;
  issuer: string;
  emailDomain: string;
  /** Self sign-up with a passkey: SIGNUP_ENABLED, else on in embedded mode and off with DATABASE_URL. */
  signupEnabled: boolean;
  /** WebAuthn relying party: its id (a host name) and the origin ceremonies must come from. */
  passkeyRp: { id: string; name: string; origin: string };
  /** A session ends this long after its sign-in: SESSION_MAX_AGE_SECONDS, else SESSION_TTL_SECONDS, else a day. */
  sessionMaxAgeSeconds: number;
  /** A session unused this long ends: SESSION_IDLE_TIMEOUT_SECONDS, at most the maximum age. */
  sessionIdleSeconds: number;
  /** No DATABASE_URL: the embedded development mode (`pnpm start`). */
  embedded: boolean;
  /** The developer portal: its internal URLs and the transactions admin token (null: API keys unavailable). */
  portal: {
    enabled: boolean;
    selfServiceApps: boolean;
    internalUrl: string;
    transactionsAdminUrl: string;
    transactionsAdminToken: string | null;
  };
  /** CLIENT_REGISTRATION as it applies: open in the embedded mode, off with a database, unless set. */
  clientRegistration: ClientRegistrationPolicy;
  /** Outbound requests (back-channel logout): plain http only in embedded mode; private addresses per setting. */
  outbound: OutboundPolicy;
}

const schema = {
  ...commonEnv,
  ...failureLimitEnv,
  IDENTITY_PORT: port(4000),
  IDENTITY_ADMIN_PORT: port(4100),
  BASE_URL: publicUrl('http://localhost:4000'),
  EMAIL_DOMAIN: Joi.string().hostname(),
  IDENTITY_SECRET: Joi.string().min(32).messages({ 'string.min': '{{#label}} must be at least 32 characters' }),
  KEY_ENCRYPTION_KEY: Joi.string().min(32).messages({ 'string.min': '{{#label}} must be at least 32 characters' }),
  CODE_TTL_SECONDS: Joi.number().integer().min(5).max(600).default(60),
  ACCESS_TOKEN_TTL_SECONDS: Joi.number().integer().min(60).max(86400).default(3600),
  ID_TOKEN_TTL_SECONDS: Joi.number().integer().min(60).max(86400).default(3600),
  SESSION_TTL_SECONDS: Joi.number().integer().min(60).max(31536000),
  SESSION_MAX_AGE_SECONDS: Joi.number().integer().min(60).max(31536000),
  SESSION_IDLE_TIMEOUT_SECONDS: Joi.number().integer().min(60).max(31536000).default(28800),
  BACKCHANNEL_LOGOUT_ATTEMPTS: Joi.number().integer().min(1).max(50).default(10),
  KEY_ROTATION_DAYS: Joi.number().min(1).max(365).default(21),
  CODE_FAILURES_PER_CLIENT: Joi.number().integer().min(1).max(1000000).default(200),
  PUBLIC_CODE_FAILURES_PER_CLIENT_AND_ADDRESS: Joi.number().integer().min(1).max(1000000).default(20),
  PUBLIC_CODE_FAILURES_PER_ADDRESS: Joi.number().integer().min(1).max(1000000).default(200),
  SIGNIN_FAILURES_PER_USER_AND_ADDRESS: Joi.number().integer().min(1).max(1000000).default(10),
  SIGNIN_FAILURES_PER_ADDRESS: Joi.number().integer().min(1).max(1000000).default(100),
  PASSKEY_FAILURES_PER_ADDRESS: Joi.number().integer().min(1).max(1000000).default(100),
  SIGNUP_ATTEMPTS_PER_ADDRESS: Joi.number().integer().min(1).max(1000000).default(20),
  SIGNUP_ENABLED: Joi.boolean(),
  PASSKEY_RP_ID: Joi.string().hostname(),
  PASSKEY_RP_NAME: Joi.string().trim().min(1).max(100).default('Attest'),
  PASSKEY_CHALLENGE_TTL_SECONDS: Joi.number().integer().min(30).max(600).default(300),
  ACCOUNT_REAUTH_SECONDS: Joi.number().integer().min(30).max(86400).default(300),
  REFRESH_TOKEN_TTL_SECONDS: Joi.number().integer().min(60).max(31536000).default(2592000),
  DEVICE_CODE_TTL_SECONDS: Joi.number().integer().min(60).max(1800).default(600),
  DEVICE_CODE_FAILURES_PER_ADDRESS: Joi.number().integer().min(1).max(1000000).default(10),
  TOKEN_EXCHANGE_TTL_SECONDS: Joi.number().integer().min(30).max(3600).default(900),
  PASSKEY_USER_VERIFICATION: Joi.string().valid('required', 'preferred').default('required'),
  PASSWORD_HASH_COST: Joi.number()
    .integer()
    .min(10)
    .max(MAX_PASSWORD_HASH_COST)
    .default(DEFAULT_PASSWORD_HASH_COST)
    .messages({ 'number.min': '{{#label}} must be at least 10 (log2 of scrypt N; 17 in production)' }),
  INTERACTIONS_PER_ADDRESS: Joi.number().integer().min(1).max(1000000).default(3000),
  BACKCHANNEL_LOGOUT_ALLOW_PRIVATE: Joi.boolean().messages({ 'boolean.base': '{{#label}} must be true or false' }),
  DPOP_PROOF_MAX_AGE_SECONDS: Joi.number().integer().min(5).max(600).default(60),
  DPOP_NONCE_REQUIRED: Joi.boolean().default(false).messages({ 'boolean.base': '{{#label}} must be true or false' }),
  PORTAL_ENABLED: Joi.boolean().default(true).messages({ 'boolean.base': '{{#label}} must be true or false' }),
  PORTAL_SELF_SERVICE_APPS: Joi.boolean()
    .default(false)
    .messages({ 'boolean.base': '{{#label}} must be true or false' }),
  PORTAL_INTERNAL_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  TRANSACTIONS_ADMIN_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  TRANSACTIONS_ADMIN_PORT: port(4101),
  TRANSACTIONS_ADMIN_TOKEN: Joi.string()
    .min(24)
    .messages({ 'string.min': '{{#label}} must be at least 24 characters' }),
  CLIENT_REGISTRATION: Joi.string()
    .valid('off', 'open', 'token')
    .messages({ 'any.only': '{{#label}} must be off, open or token' }),
  REGISTRATIONS_PER_ADDRESS: Joi.number().integer().min(1).max(1000000).default(20),
  REGISTRATION_UNUSED_HOURS: Joi.number().integer().min(1).max(8760).default(24),
  CLIENT_ID_METADATA_DOCUMENTS: Joi.boolean()
    .default(true)
    .messages({ 'boolean.base': '{{#label}} must be true or false' }),
  CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW: Joi.boolean()
    .default(false)
    .messages({ 'boolean.base': '{{#label}} must be true or false' }),
};

/** The RP id must be BASE_URL's host or a parent domain of it, or browsers refuse every ceremony. */
function passkeyRp(base: IdentityEnv): IdentityConfig['passkeyRp'] {
  const url = new URL(base.BASE_URL);
  const id = base.PASSKEY_RP_ID ?? url.hostname;
  if (url.hostname !== id && !url.hostname.endsWith(`.${id}`)) {
    throw new ConfigError([`"PASSKEY_RP_ID" must be the host of BASE_URL (${url.hostname}) or a parent domain of it`]);
  }
  return { id, name: base.PASSKEY_RP_NAME, origin: url.origin };
}

export function loadIdentityConfig(env: NodeJS.ProcessEnv): Readonly<IdentityConfig> {
  const base = loadEnv<IdentityEnv>(schema, env);
  const embedded = !base.DATABASE_URL;
  const sessionMaxAgeSeconds = base.SESSION_MAX_AGE_SECONDS ?? base.SESSION_TTL_SECONDS ?? 86400;
  return Object.freeze({
    ...base,
    secret: resolveSecret('IDENTITY_SECRET', base.IDENTITY_SECRET, base.DATA_DIR, 'identity/secret', embedded),
    keyEncryptionKey: resolveSecret(
      'KEY_ENCRYPTION_KEY',
      base.KEY_ENCRYPTION_KEY,
      base.DATA_DIR,
      'identity/key-encryption-key',
      embedded,
    ),
    issuer: base.BASE_URL,
    emailDomain: base.EMAIL_DOMAIN ?? new URL(base.BASE_URL).hostname,
    signupEnabled: base.SIGNUP_ENABLED ?? embedded,
    passkeyRp: passkeyRp(base),
    sessionMaxAgeSeconds,
    sessionIdleSeconds: Math.min(base.SESSION_IDLE_TIMEOUT_SECONDS, sessionMaxAgeSeconds),
    embedded,
    portal: {
      enabled: base.PORTAL_ENABLED,
      selfServiceApps: base.PORTAL_SELF_SERVICE_APPS,
      internalUrl: (base.PORTAL_INTERNAL_URL ?? `http://127.0.0.1:${base.IDENTITY_PORT}`).replace(/\/+$/, ''),
      transactionsAdminUrl: (
        base.TRANSACTIONS_ADMIN_URL ?? `http://127.0.0.1:${base.TRANSACTIONS_ADMIN_PORT ?? 4101}`
      ).replace(/\/+$/, ''),
      transactionsAdminToken:
        base.TRANSACTIONS_ADMIN_TOKEN ??
        base.ADMIN_TOKEN ??
        (embedded ? resolveAdminToken(undefined, base.DATA_DIR, true) : null),
    },
    clientRegistration: base.CLIENT_REGISTRATION ?? (embedded ? 'open' : 'off'),
    outbound: {
      allowHttp: embedded,
      allowPrivate: base.BACKCHANNEL_LOGOUT_ALLOW_PRIVATE ?? embedded,
      allowPrivateSetting: 'BACKCHANNEL_LOGOUT_ALLOW_PRIVATE',
    },
  });
}
