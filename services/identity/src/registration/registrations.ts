import {
  AppError,
  constantTimeEqual,
  FailureLimiter,
  refusalFields,
  type AuditActor,
  type AuditLog,
  type Cache,
  type Logger,
} from '@attest/common';
import type { IdentityConfig } from '../config';
import type { App } from '../kernel/app-store';
import type { AppDirectory } from '../kernel/directories';
import { hmacHex, randomHex } from '../kernel/crypto';
import { hashClientSecret, newAppId, newClientSecret } from '../kernel/ids';
import { checkClientMetadata, registrationError, type AuthMethod } from './client-metadata';
import { DEVICE_CODE_GRANT_TYPE, type RegisteredMetadata, type RegistrationStore } from './registration-store';

const POLICY = 'registrations-per-address';

/** What a client is told of its registration (RFC 7591 §3.2.1, RFC 7592 §3). */
export interface ClientInformation extends RegisteredMetadata {
  client_id: string;
  client_id_issued_at: number;
  client_secret?: string;
  client_secret_expires_at?: number;
  registration_access_token?: string;
  registration_client_uri: string;
}

export const hashRegistrationAccessToken = (secret: string, token: string) =>
  hmacHex(secret, `registration-access-token:${token}`);
export const hashInitialAccessToken = (secret: string, token: string) =>
  hmacHex(secret, `initial-access-token:${token}`);

/** RFC 6750 §3.1: 401 with a Bearer challenge; the same answer whether the client exists or not. */
export const invalidRegistrationToken = (detail: string) =>
  new AppError('invalid_token', 401, detail, 'Authorization', {
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    extra: { error: 'invalid_token', error_description: detail },
  });

/** How often unused registrations and metadata-document clients are looked for. */
const SWEEP_EVERY_MS = 15 * 60 * 1000;

export interface RegistrationsDeps {
  config: Pick<
    IdentityConfig,
    | 'issuer'
    | 'secret'
    | 'clientRegistration'
    | 'REGISTRATIONS_PER_ADDRESS'
    | 'REGISTRATION_UNUSED_HOURS'
    | 'AUTH_FAILURE_WINDOW_SECONDS'
    | 'CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW'
  >;
  store: RegistrationStore;
  apps: Pick<AppDirectory, 'invalidate'>;
  cache: Cache;
  audit: Pick<AuditLog, 'record'>;
  logger: Logger;
  now: () => number;
}

/**
 * Dynamic Client Registration (RFC 7591) and its management (RFC 7592), under CLIENT_REGISTRATION: `open`
 * registers public clients only (PKCE, no secret), so many per address, and deletes those nobody signed in
 * to within REGISTRATION_UNUSED_HOURS; `token` needs an initial access token (`pnpm manage
 * registration-token create`) and may register confidential clients (client_secret_basic, _post). A
 * registered client is an app of registration `dynamic`: an operator sees it, and may disable it, as any
 * other. Its registration access token and secret are kept as keyed hashes and shown once.
 */
export class Registrations {
  private readonly limiter: FailureLimiter;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly deps: RegistrationsDeps) {
    this.limiter = new FailureLimiter(deps.cache, 'registrations', [
      {
        name: POLICY,
        limit: deps.config.REGISTRATIONS_PER_ADDRESS,
        windowSeconds: deps.config.AUTH_FAILURE_WINDOW_SECONDS,
      },
    ]);
  }

  get policy() {
    return this.deps.config.clientRegistration;
  }

  clientUri(id: string): string {
    return `${this.deps.config.issuer}/register/${id}`;
  }

  /** POST /register: the initial access token (Bearer, `token` policy) and the address (`open` limit). */
  async register(
    input: unknown,
    presented: { bearer: string | undefined; address: string; actor: AuditActor },
  ): Promise<ClientInformation> {
    const { config, store } = this.deps;
    let registeredWith: string | null = null;
    let allowed: AuthMethod[] = ['none'];
    if (config.clientRegistration === 'token') {
      if (!presented.bearer)
        throw invalidRegistrationToken('Registration needs an initial access token (Authorization: Bearer …).');
      const token = await store.useToken(
        hashInitialAccessToken(config.secret, presented.bearer),
        new Date(this.deps.now()),
      );
      if (!token || !constantTimeEqual(token.tokenHash, hashInitialAccessToken(config.secret, presented.bearer)))
        throw invalidRegistrationToken('The initial access token is unknown, revoked or expired.');
      registeredWith = token.id;
      allowed = ['none', 'client_secret_basic', 'client_secret_post'];
    }
    const metadata = checkClientMetadata(input, allowed);
    this.checkDeviceFlow(metadata, registeredWith);
    if (config.clientRegistration === 'open') {
      await this.takeSlot(presented.address);
      await this.sweep();
    }
    const method = metadata.token_endpoint_auth_method as AuthMethod;
    const secret = method === 'none' ? null : newClientSecret();
    const registrationAccessToken = `rat_${randomHex(24)}`;
    const app = await store.insertDynamic({
      id: newAppId(),
      name: metadata.client_name ?? 'Unnamed client',
      secretHash: secret && hashClientSecret(config.secret, secret),
      tokenEndpointAuthMethod: method,
      redirectUris: metadata.redirect_uris,
      registrationTokenHash: hashRegistrationAccessToken(config.secret, registrationAccessToken),
      registeredWith,
      metadata,
    });
    await this.deps.apps.invalidate(app.id);
    this.deps.logger.info('client registered', { app_id: app.id, public: app.public });
    await this.deps.audit.record({
      type: 'app.registered',
      actor: presented.actor,
      subject: app.id,
      detail: {
        registration: 'dynamic',
        name: app.name,
        redirect_uris: app.redirectUris,
        token_endpoint_auth_method: method,
        ...(registeredWith ? { registration_token_id: registeredWith } : {}),
      },
    });
    return {
      ...this.information(app, metadata),
      ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
      registration_access_token: registrationAccessToken,
    };
  }

  /**
   * A security review (issue 41): the device flow lets whoever holds a client start a sign-in on a code they
   * show someone else (RFC 8628 §5.4, device-code phishing), so a client that registered itself, without an
   * initial access token (`open`), may not ask for its grant type unless CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW
   * is true. One registered with an operator's initial access token (`token`) may; an operator's app is
   * enabled with `pnpm manage app update ID --device-flow`.
   */
  private checkDeviceFlow(metadata: RegisteredMetadata, registeredWith: string | null): void {
    if (registeredWith !== null || this.deps.config.CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW) return;
    if (metadata.grant_types.includes(DEVICE_CODE_GRANT_TYPE))
      throw registrationError(
        'invalid_client_metadata',
        `grant_types may not include ${DEVICE_CODE_GRANT_TYPE} for a client registering itself: the device flow ` +
          'needs registration with an initial access token (CLIENT_REGISTRATION=token) or ' +
          'CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW=true.',
        'grant_types',
      );
  }

  /** The dynamic app this registration access token is for; the same 401 for an unknown app or a wrong token. */
  async authorized(id: string, bearer: string | undefined) {
    const found = await this.deps.store.findDynamic(id);
    const presented = hashRegistrationAccessToken(this.deps.config.secret, bearer ?? '');
    const stored = found?.registrationTokenHash ?? hashRegistrationAccessToken(this.deps.config.secret, 'rat_none');
    const matches = constantTimeEqual(presented, stored);
    if (!found || !bearer || !found.registrationTokenHash || !matches)
      throw invalidRegistrationToken('Unknown client, or a wrong registration access token.');
    return found;
  }

  /** RFC 7592 §2.1. */
  async read(id: string, bearer: string | undefined): Promise<ClientInformation> {
    const found = await this.authorized(id, bearer);
    return this.information(found.app, found.metadata);
  }

  /** RFC 7592 §2.2: the whole registration sent again; its authentication method and secret stay. */
  async update(id: string, bearer: string | undefined, input: unknown, actor: AuditActor): Promise<ClientInformation> {
    const found = await this.authorized(id, bearer);
    const body = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
    if (body.client_id !== id)
      throw registrationError('invalid_client_metadata', 'client_id must be given, and be this client’s.', 'client_id');
    for (const field of [
      'registration_access_token',
      'registration_client_uri',
      'client_id_issued_at',
      'client_secret_expires_at',
    ])
      if (body[field] !== undefined)
        throw registrationError('invalid_request', `${field} must not be sent in an update.`, field);
    if (body.client_secret !== undefined)
      throw registrationError(
        'invalid_request',
        'client_secret must not be sent in an update (it does not change).',
        'client_secret',
      );
    const method = found.app.tokenEndpointAuthMethod as AuthMethod;
    const metadata = checkClientMetadata({ token_endpoint_auth_method: method, ...body }, [method]);
    this.checkDeviceFlow(metadata, found.registeredWith);
    const app = await this.deps.store.updateDynamic(
      id,
      metadata.client_name ?? 'Unnamed client',
      metadata.redirect_uris,
      metadata,
    );
    await this.deps.apps.invalidate(id);
    await this.deps.audit.record({
      type: 'app.updated',
      actor,
      subject: id,
      detail: { registration: 'dynamic', name: app.name, redirect_uris: app.redirectUris },
    });
    return this.information(app, metadata);
  }

  /** RFC 7592 §2.3: the app is deleted (its consents, subjects and tokens with it). */
  async remove(id: string, bearer: string | undefined, actor: AuditActor): Promise<void> {
    await this.authorized(id, bearer);
    await this.deps.store.deleteDynamic(id);
    await this.deps.apps.invalidate(id);
    await this.deps.audit.record({ type: 'app.deleted', actor, subject: id, detail: { registration: 'dynamic' } });
  }

  /**
   * Open registrations and metadata-document clients nobody signed in to within REGISTRATION_UNUSED_HOURS:
   * deleted, each audited. Run at each open registration and every SWEEP_EVERY_MS (start()).
   */
  async sweep(): Promise<string[]> {
    const before = new Date(this.deps.now() - this.deps.config.REGISTRATION_UNUSED_HOURS * 3600 * 1000);
    const removed = await this.deps.store.deleteUnused(before);
    for (const { id, registration } of removed) {
      await this.deps.apps.invalidate(id);
      await this.deps.audit.record({
        type: 'app.deleted',
        actor: { type: 'system', id: 'registration-expiry' },
        subject: id,
        detail: { registration, reason: 'unused' },
      });
    }
    return removed.map((r) => r.id);
  }

  /** The periodic sweep (stop() ends it); a failed run is logged and tried again at the next. */
  start(): void {
    this.sweeper ??= setInterval(() => {
      this.sweep().catch((err: unknown) =>
        this.deps.logger.warn('unused clients not swept', { error: (err as Error).message }),
      );
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private async takeSlot(address: string): Promise<void> {
    const keys = { [POLICY]: address };
    const blocked = this.limiter.blocked(keys) ?? (await this.limiter.recordFailure(keys)).exceeded;
    if (!blocked) return;
    const headers = refusalFields(blocked);
    throw new AppError(
      'too_many_requests',
      429,
      `Too many clients were registered from this address; try again in ${headers['Retry-After']} seconds.`,
      null,
      { headers },
    );
  }

  private information(app: App, metadata: RegisteredMetadata): ClientInformation {
    return {
      client_id: app.id,
      client_id_issued_at: Math.floor(app.createdAt.getTime() / 1000),
      ...metadata,
      registration_client_uri: this.clientUri(app.id),
    };
  }
}
