import { createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { fetchPublicJwks, type Logger, type OutboundPolicy, type PublicJwk } from '@attest/common';
import { REASONS, type Reason } from './reasons';

/**
 * The attest-human x402 extension (issue 43, "Proof of the human behind the agent"): a seller asks that the
 * payer be an agent acting for a verified human, and the buyer shows it with an Attest delegated access token
 * (RFC 8693 token exchange at the identity service: `act` names the agent, `sub` the person as that agent
 * knows them, `acr` their verification level).
 *
 * - The seller states it in the payment requirements' `extra` (what it sends the facilitator itself, so a
 *   buyer cannot remove it): `extra["attest-human"] = {"audience": "<its resource at Attest>", "acr": "…"}`.
 *   It may also declare the extension in its 402 answer (`extensions["attest-human"]`, `info` as above), as
 *   x402 v2 extensions are declared, for clients that read declarations.
 * - The buyer adds, as an x402 v2 extension echo in the payment payload,
 *   `extensions["attest-human"] = {"info": {"token": "<delegated access token>"}}`.
 *
 * The token is checked offline: signed by a key of the identity service's JWKS (fetched over HTTP through
 * the outbound guard, cached), `typ` at+jwt, `iss` X402_IDENTITY_ISSUER, `aud` the seller's audience, not
 * expired, with `act`, and `acr` at least the level asked.
 */
export const HUMAN_EXTENSION = 'attest-human';

/** Identity's verification levels as `acr`, weakest first (a stronger one meets a weaker requirement). */
export const HUMAN_ACR_LEVELS = ['urn:attest:loa:device', 'urn:attest:loa:orb'] as const;

/** What the seller asks: its resource (the token's `aud`) and the least verification level. */
export interface HumanRequirement {
  audience: string;
  acr: string;
}

/** The person behind the agent that paid: their pairwise subject as the agent knows them, and the agent. */
export interface HumanPayer {
  /** The token's `sub`: the person's pairwise id for the agent app (the same person through another agent has another). */
  sub: string;
  /** The agent acting for them: `act.sub`, the agent app's client id. */
  agent: string;
  acr: string;
}

export type HumanCheck = { human: HumanPayer } | { reason: Reason; message: string };

const MAX_TOKEN_LENGTH = 8192;

/**
 * The seller's requirement, or null when it asks for none; a sentence when `extra["attest-human"]` is there but
 * not an object with an audience (and an acr of identity's, when given; the weakest when not).
 */
export function humanRequirement(requirements: PaymentRequirements): HumanRequirement | null | string {
  const asked = requirements.extra?.[HUMAN_EXTENSION];
  if (asked === undefined) return null;
  const field = `paymentRequirements.extra["${HUMAN_EXTENSION}"]`;
  if (typeof asked !== 'object' || asked === null || Array.isArray(asked))
    return `${field} must be an object: {"audience": "<your resource at Attest>", "acr": "<least level>"}.`;
  const { audience, acr } = asked as { audience?: unknown; acr?: unknown };
  if (typeof audience !== 'string' || audience.length === 0 || audience.length > 2000)
    return `${field}.audience must be your resource's URI at Attest (the delegated token's aud).`;
  if (acr !== undefined && !(HUMAN_ACR_LEVELS as readonly unknown[]).includes(acr))
    return `${field}.acr must be one of ${HUMAN_ACR_LEVELS.join(', ')} (or left out: the weakest).`;
  return { audience, acr: (acr as string | undefined) ?? HUMAN_ACR_LEVELS[0] };
}

/** The delegated token the buyer put in the payload's attest-human extension, or null. */
function presentedToken(payload: PaymentPayload): string | null {
  const extension = payload.extensions?.[HUMAN_EXTENSION] as { info?: { token?: unknown } } | undefined;
  const token = extension?.info?.token;
  return typeof token === 'string' && token.length > 0 ? token : null;
}

interface Jwk {
  kty: string;
  kid?: string;
  alg?: string;
  use?: string;
  crv?: string;
}

/** The algorithms identity signs access tokens with, as node:crypto verifies each. */
const ALGS: Record<string, { kty: string; verify(input: Buffer, key: KeyObject, signature: Buffer): boolean }> = {
  RS256: { kty: 'RSA', verify: (input, key, sig) => verifySignature('sha256', input, key, sig) },
  PS256: {
    kty: 'RSA',
    verify: (input, key, sig) =>
      verifySignature('sha256', input, { key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: 32 }, sig),
  },
  ES256: {
    kty: 'EC',
    verify: (input, key, sig) => verifySignature('sha256', input, { key, dsaEncoding: 'ieee-p1363' }, sig),
  },
};

export interface IdentityKeysOptions {
  /** How long a fetched JWK Set is used before it is fetched again. */
  ttlMs: number;
  /** A kid the set does not have fetches it again, at most this often (a key rotation at the identity service). */
  refreshAfterMs: number;
  timeoutMs: number;
  maxBytes: number;
  now: () => number;
}

/**
 * The identity service's public signing keys: its JWK Set at `jwksUrl` (GET, through the outbound guard: the
 * checked address connected to, no redirects, a size and time limit), kept for ttlMs and fetched again for an
 * unknown kid. A set that cannot be fetched now leaves the last one serving. The transactions service runs
 * apart from identity: this is its only link to it.
 */
export class IdentityKeys {
  private set: { keys: Jwk[]; fetchedAt: number } | null = null;
  /** When the last fetch began, whatever its outcome. */
  private lastAttempt: number | null = null;
  private pending: Promise<void> | null = null;
  private readonly options: IdentityKeysOptions;

  constructor(
    private readonly jwksUrl: string,
    private readonly policy: OutboundPolicy,
    private readonly logger: Logger,
    options: Partial<IdentityKeysOptions> = {},
  ) {
    this.options = {
      ttlMs: 300000,
      refreshAfterMs: 10000,
      timeoutMs: 5000,
      maxBytes: 64 * 1024,
      now: Date.now,
      ...options,
    };
  }

  /** The key `kid` names for `alg`, or null (none such, or the set cannot be had). */
  async key(kid: string, alg: string): Promise<KeyObject | null> {
    const now = this.options.now();
    // at most one fetch every refreshAfterMs, whatever happened to the last one (identity down: no storm)
    const mayFetch = this.lastAttempt === null || now - this.lastAttempt >= this.options.refreshAfterMs;
    if (mayFetch && (!this.set || now - this.set.fetchedAt >= this.options.ttlMs)) await this.fetch(now);
    let jwk = this.pick(kid, alg);
    if (!jwk && this.set && (this.lastAttempt === null || now - this.lastAttempt >= this.options.refreshAfterMs)) {
      await this.fetch(now);
      jwk = this.pick(kid, alg);
    }
    if (!jwk) return null;
    try {
      return createPublicKey({ key: jwk as never, format: 'jwk' });
    } catch {
      return null;
    }
  }

  private pick(kid: string, alg: string): Jwk | null {
    return (
      this.set?.keys.find(
        (k) =>
          k.kid === kid &&
          k.kty === ALGS[alg]?.kty &&
          (k.alg === undefined || k.alg === alg) &&
          (k.use === undefined || k.use === 'sig'),
      ) ?? null
    );
  }

  /** One fetch at a time, whoever asks. */
  private fetch(now: number): Promise<void> {
    if (!this.pending) {
      this.lastAttempt = now;
      this.pending = this.load().finally(() => (this.pending = null));
    }
    return this.pending;
  }

  private async load(): Promise<void> {
    try {
      // a symmetric key (k) has no place in the identity service's public set: never taken to check a token
      const keys = (await fetchPublicJwks(new URL(this.jwksUrl), this.policy, this.options)).filter(
        (k): k is PublicJwk & Jwk => !('k' in k),
      );
      this.set = { keys, fetchedAt: this.options.now() };
    } catch (err) {
      this.logger.warn('identity JWKS could not be fetched (x402 attest-human)', {
        url: this.jwksUrl,
        error: (err as Error).message,
      });
    }
  }
}

interface Claims {
  iss?: unknown;
  aud?: unknown;
  sub?: unknown;
  exp?: unknown;
  nbf?: unknown;
  acr?: unknown;
  act?: { sub?: unknown };
  cnf?: unknown;
}

/** Checks the attest-human proof a seller asks for: the delegated token in the payload's extension. */
export class HumanProofs {
  constructor(
    private readonly keys: IdentityKeys,
    /** X402_IDENTITY_ISSUER: the identity service's issuer, the tokens' `iss`. */
    private readonly issuer: string,
    private readonly now: () => number = Date.now,
  ) {}

  async check(payload: PaymentPayload, required: HumanRequirement): Promise<HumanCheck> {
    const refuse = (reason: Reason, message: string): HumanCheck => ({ reason, message });
    const where = `paymentPayload.extensions["${HUMAN_EXTENSION}"].info.token`;
    const token = presentedToken(payload);
    if (!token)
      return refuse(
        REASONS.humanMissing,
        `This payment must come from an agent acting for a verified person: put an Attest delegated access token (token exchange, with act) for ${required.audience} in ${where}.`,
      );
    const parts = token.length <= MAX_TOKEN_LENGTH ? token.split('.') : [];
    let header: { alg?: unknown; kid?: unknown; typ?: unknown };
    let claims: Claims;
    try {
      if (parts.length !== 3) throw new Error('not a compact JWS');
      header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as typeof header;
      claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as Claims;
      if (typeof header !== 'object' || header === null || typeof claims !== 'object' || claims === null)
        throw new Error('header or claims not an object');
    } catch {
      return refuse(REASONS.humanInvalid, `${where} is not a JWT.`);
    }
    const alg = typeof header.alg === 'string' ? header.alg : '';
    if (!ALGS[alg] || typeof header.kid !== 'string' || header.typ !== 'at+jwt')
      return refuse(
        REASONS.humanInvalid,
        `${where} is not an Attest access token (typ at+jwt, RS256/PS256/ES256, kid).`,
      );
    const key = await this.keys.key(header.kid, alg);
    if (!key || !ALGS[alg].verify(Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2], 'base64url')))
      return refuse(REASONS.humanInvalid, `${where} is not signed by a key of the identity service (${this.issuer}).`);
    if (claims.iss !== this.issuer) return refuse(REASONS.humanInvalid, `${where} was not issued by ${this.issuer}.`);
    // sender-constrained (RFC 9449): only its key's proof makes it usable, and no proof reaches a facilitator
    if (claims.cnf !== undefined)
      return refuse(
        REASONS.humanInvalid,
        `${where} is bound to a DPoP key (cnf), whose proof a facilitator cannot check: exchange one without DPoP for payments.`,
      );
    const nowSeconds = Math.floor(this.now() / 1000);
    if (typeof claims.exp !== 'number' || claims.exp <= nowSeconds)
      return refuse(REASONS.humanExpired, `${where} has expired: the agent exchanges a new one.`);
    if (typeof claims.nbf === 'number' && claims.nbf > nowSeconds)
      return refuse(REASONS.humanInvalid, `${where} is not valid yet.`);
    if (claims.aud !== required.audience)
      return refuse(
        REASONS.humanAudience,
        `${where} is for ${typeof claims.aud === 'string' ? claims.aud : 'another audience'}, not ${required.audience} (paymentRequirements.extra["${HUMAN_EXTENSION}"].audience).`,
      );
    if (typeof claims.sub !== 'string' || typeof claims.act?.sub !== 'string')
      return refuse(
        REASONS.humanNotDelegated,
        `${where} has no act: it must be a token an agent got by token exchange, acting for a person.`,
      );
    const rank = (acr: unknown) => (HUMAN_ACR_LEVELS as readonly unknown[]).indexOf(acr);
    if (rank(claims.acr) < rank(required.acr))
      return refuse(
        REASONS.humanAcr,
        `The person's verification (acr ${typeof claims.acr === 'string' ? claims.acr : 'none'}) is below the ${required.acr} this payment asks for.`,
      );
    return { human: { sub: claims.sub, agent: claims.act.sub, acr: claims.acr as string } };
  }
}
