import {
  AppError,
  FailureLimiter,
  getFromTarget,
  outboundUrlProblem,
  refusalFields,
  resolveTarget,
  type AuditLog,
  type Cache,
  type Logger,
  type OutboundPolicy,
} from '@attest/common';
import type { App } from '../kernel/app-store';
import type { ExternalClients } from '../kernel/directories';
import { isClientIdUrl } from '../kernel/ids';
import { checkClientMetadata } from './client-metadata';
import { DEVICE_CODE_GRANT_TYPE, type RegisteredMetadata, type RegistrationStore } from './registration-store';

/**
 * How long a fetched document is used: its HTTP caching (Cache-Control max-age, else Expires), held within
 * these bounds; without either, the default. A document that cannot be fetched again is used MIN longer
 * (and fetched again then), so an outage at the client does not lock its people out at once.
 */
export const METADATA_CACHE_SECONDS = { min: 60, default: 3600, max: 86400 } as const;
/** The largest document read (the draft asks servers to bound it; 5 KiB is its example). */
export const METADATA_MAX_BYTES = 16 * 1024;

const refused = (clientId: string, why: string) =>
  new AppError('invalid_client', 400, `The client_id metadata document at ${clientId} ${why}`, 'client_id');

/**
 * Why a client_id cannot be the address of a metadata document (draft-ietf-oauth-client-id-metadata-document
 * §3): https (plain http on loopback only where the outbound guard allows it), with a path, no fragment,
 * no user name or password, no dot segments. Null when it can.
 */
export function clientIdUrlProblem(clientId: string, policy: OutboundPolicy): string | null {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'is not a URL.';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) return 'must be an https URL.';
  if (url.hash || clientId.includes('#')) return 'must not contain a fragment.';
  if (url.username || url.password) return 'must not contain a user name or password.';
  if (url.pathname === '/' || /(^|\/)\.\.?(\/|$)/.test(clientId.replace(/^[a-z]+:\/\/[^/]+/i, '')))
    return 'must have a path, without . or .. segments.';
  if (url.href !== clientId) return `must be written as a normalised URL (${url.href}).`;
  return null;
}

/** Seconds the answer may be used, from its Cache-Control or Expires, within METADATA_CACHE_SECONDS. */
export function cacheSeconds(headers: Record<string, string | string[] | undefined>, nowMs: number): number {
  const bound = (s: number) => Math.min(Math.max(s, METADATA_CACHE_SECONDS.min), METADATA_CACHE_SECONDS.max);
  const cacheControl = String(headers['cache-control'] ?? '').toLowerCase();
  if (/(^|[\s,])(no-store|no-cache)([\s,=]|$)/.test(cacheControl)) return METADATA_CACHE_SECONDS.min;
  const maxAge = /(?:^|[\s,])max-age=(\d+)/.exec(cacheControl);
  if (maxAge) return bound(Number(maxAge[1]));
  const expires = headers.expires ? Date.parse(String(headers.expires)) : NaN;
  if (!Number.isNaN(expires)) return bound(Math.floor((expires - nowMs) / 1000));
  return METADATA_CACHE_SECONDS.default;
}

export interface MetadataDocumentOptions {
  policy: OutboundPolicy;
  enabled: boolean;
  logger: Logger;
  audit: Pick<AuditLog, 'record'>;
  now: () => number;
  timeoutMs?: number;
  /**
   * First fetches of a client_id never seen before, per address of the request that named it, in a window
   * (REGISTRATIONS_PER_ADDRESS in AUTH_FAILURE_WINDOW_SECONDS, as for registrations): each writes an app
   * row and makes an outbound request, so an anonymous caller may not make them without end.
   */
  firstFetches: { cache: Cache; perAddress: number; windowSeconds: number };
  /**
   * CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW: a document may enable the device flow (its grant type); without it,
   * that grant type of a document is not kept, so the client has the code flow only (a security review:
   * anyone can publish a document, and a device code is a ready phishing lure, RFC 8628 §5.4).
   */
  allowDeviceFlow: boolean;
}

/** Why a fetch failed, in words safe to show anyone: its HTTP status or a bad body; nothing of the network. */
const shownReason = (why: string) => (/^(answered \d{3}|is not JSON)$/.test(why) ? why : 'no usable answer');

/**
 * Client ID Metadata Documents (issue 41): a client_id that is an https URL is the address of the client's
 * metadata. It is fetched through the outbound guard (public addresses unless allowed, the checked address
 * connected to, no redirects, bounded in size and time), checked (client_id equal to the URL, redirect URIs,
 * a public client: no secret-based authentication), and kept as an app row of registration
 * metadata_document (consents, pairwise subjects and an operator's disable attach to it), used until its
 * HTTP caching says; AppDirectory asks here when that has passed.
 */
export class MetadataDocuments implements ExternalClients {
  private readonly pending = new Map<string, Promise<App | null>>();
  private readonly limiter: FailureLimiter;

  constructor(
    private readonly store: RegistrationStore,
    private readonly options: MetadataDocumentOptions,
  ) {
    this.limiter = new FailureLimiter(options.firstFetches.cache, 'metadata-documents', [
      {
        name: 'first-fetches-per-address',
        limit: options.firstFetches.perAddress,
        windowSeconds: options.firstFetches.windowSeconds,
      },
    ]);
  }

  handles(id: string): boolean {
    return this.options.enabled && isClientIdUrl(id);
  }

  resolve(id: string, known: App | null, from?: string): Promise<App | null> {
    let running = this.pending.get(id);
    if (!running) {
      running = this.load(id, known, from).finally(() => this.pending.delete(id));
      this.pending.set(id, running);
    }
    return running;
  }

  private async load(clientId: string, known: App | null, from: string | undefined): Promise<App | null> {
    const problem = clientIdUrlProblem(clientId, this.options.policy);
    if (problem) throw refused(clientId, problem);
    // what the URL itself says (an address literal that is not public) is told; what the network says is not
    const unsafe = outboundUrlProblem(clientId, 'client_id', this.options.policy);
    if (unsafe) throw new AppError('invalid_client', 400, unsafe, 'client_id');
    if (!known) await this.takeSlot(from ?? 'unknown');
    const now = this.options.now();
    let body: unknown;
    let seconds: number;
    try {
      const url = new URL(clientId);
      const target = await resolveTarget(url, this.options.policy);
      const answer = await getFromTarget(
        url,
        target,
        { accept: 'application/json' },
        { timeoutMs: this.options.timeoutMs ?? 5000, maxBytes: METADATA_MAX_BYTES },
      );
      if (answer.statusCode !== 200) throw new Error(`answered ${answer.statusCode}`);
      try {
        body = JSON.parse(answer.body);
      } catch {
        throw new Error('is not JSON');
      }
      seconds = cacheSeconds(answer.headers, now);
    } catch (err) {
      const why = (err as Error).message;
      this.options.logger.warn('client_id metadata document could not be fetched', { client_id: clientId, error: why });
      if (known) {
        // the last version serves a little longer; it is tried again then
        await this.store.extendDocumentApp(clientId, new Date(now + METADATA_CACHE_SECONDS.min * 1000));
        return known;
      }
      // the network's own words (a blocked address, a refused connection) stay in the log: shown to an
      // anonymous caller they would tell how internal names resolve and which ports answer
      throw refused(clientId, `could not be fetched (${shownReason(why)}).`);
    }
    const metadata = this.withoutDeviceFlow(this.check(clientId, body));
    const { app, inserted, previous } = await this.store.upsertDocumentApp({
      id: clientId,
      name: metadata.client_name ?? new URL(clientId).host,
      redirectUris: metadata.redirect_uris,
      expiresAt: new Date(now + seconds * 1000),
      metadata,
    });
    if (inserted || previous?.join(' ') !== app.redirectUris.join(' '))
      await this.options.audit.record({
        type: inserted ? 'app.registered' : 'app.updated',
        actor: { type: 'app', id: clientId },
        subject: clientId,
        detail: { registration: 'metadata_document', name: app.name, redirect_uris: app.redirectUris },
      });
    return app;
  }

  private async takeSlot(address: string): Promise<void> {
    const keys = { 'first-fetches-per-address': address };
    const blocked = this.limiter.blocked(keys) ?? (await this.limiter.recordFailure(keys)).exceeded;
    if (!blocked) return;
    const headers = refusalFields(blocked);
    throw new AppError(
      'too_many_requests',
      429,
      `Too many new client_id metadata documents were named from this address; try again in ${headers['Retry-After']} seconds.`,
      'client_id',
      { headers },
    );
  }

  /** The metadata as kept: the device grant type only where the operator allows it (allowDeviceFlow). */
  private withoutDeviceFlow(metadata: RegisteredMetadata): RegisteredMetadata {
    if (this.options.allowDeviceFlow || !metadata.grant_types.includes(DEVICE_CODE_GRANT_TYPE)) return metadata;
    return { ...metadata, grant_types: metadata.grant_types.filter((g) => g !== DEVICE_CODE_GRANT_TYPE) };
  }

  /** The document's metadata, or the refusal naming what is wrong with it. */
  private check(clientId: string, body: unknown) {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw refused(clientId, 'must be a JSON object.');
    const doc = body as Record<string, unknown>;
    if (doc.client_id !== clientId) throw refused(clientId, 'must name this very URL as its client_id.');
    if (doc.client_secret !== undefined || doc.client_secret_expires_at !== undefined)
      throw refused(clientId, 'must not hold a client_secret (a metadata document client is a public client).');
    try {
      return checkClientMetadata(doc, ['none']);
    } catch (err) {
      throw refused(clientId, `is not usable: ${(err as AppError).detail}`);
    }
  }
}
