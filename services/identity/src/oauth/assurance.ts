import type { VerificationLevel } from '../kernel/user-store';
import { redirectErrors, RedirectError } from './oauth-error';
import type { Scope } from '../kernel/scopes';

/**
 * The verification level as OpenID Connect's `acr` (Authentication Context Class Reference): one value a
 * level, the stronger satisfying the weaker (an orb-verified person meets a request for device).
 */
export const ACR: Record<VerificationLevel, string> = {
  orb: 'urn:attest:loa:orb',
  device: 'urn:attest:loa:device',
};
/** Strongest first (discovery's acr_values_supported). */
export const ACR_VALUES_SUPPORTED = [ACR.orb, ACR.device];
const RANK: Record<VerificationLevel, number> = { device: 1, orb: 2 };

export const acrOf = (level: VerificationLevel): string => ACR[level];
const levelOf = (acr: string): VerificationLevel | undefined =>
  (Object.keys(ACR) as VerificationLevel[]).find((l) => ACR[l] === acr);

/** Whether a person at `level` satisfies the acr value `acr` (an unknown value is never satisfied). */
export function satisfies(level: VerificationLevel, acr: string): boolean {
  const asked = levelOf(acr);
  return asked !== undefined && RANK[level] >= RANK[asked];
}

/** One member of a claims request (OIDC Core §5.5.1): null, or these. */
export interface ClaimRequest {
  essential?: boolean;
  value?: unknown;
  values?: unknown[];
}

/** The `claims` request parameter, as kept with the request: the members asked of each place. */
export interface ClaimsRequest {
  id_token?: Record<string, ClaimRequest | null>;
  userinfo?: Record<string, ClaimRequest | null>;
}

/** The claims /userinfo adds when the claims parameter asks for them (they are in every id_token). */
export const SIGN_IN_CLAIMS = ['acr', 'amr', 'auth_time'] as const;
export type SignInClaim = (typeof SIGN_IN_CLAIMS)[number];

/** The scope a person's claim belongs to: asking for the claim asks for (and shows consent for) its scope. */
const CLAIM_SCOPES: Record<string, Scope> = {
  email: 'email',
  name: 'profile',
  given_name: 'profile',
  family_name: 'profile',
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function memberProblem(place: string, name: string, member: unknown): string | null {
  if (member === null) return null;
  if (!isObject(member)) return `claims.${place}.${name} must be null or an object.`;
  if (member.essential !== undefined && typeof member.essential !== 'boolean')
    return `claims.${place}.${name}.essential must be true or false.`;
  if (member.values !== undefined && !Array.isArray(member.values))
    return `claims.${place}.${name}.values must be an array.`;
  if (name === 'acr') {
    const asked = member.values ?? (member.value === undefined ? [] : [member.value]);
    if ((asked as unknown[]).some((v) => typeof v !== 'string')) return `claims.${place}.acr values must be strings.`;
  }
  return null;
}

/**
 * The claims parameter (OIDC Core §5.5): a JSON object whose id_token and userinfo members, when present,
 * are objects of claim requests. Other members are ignored, as the standard says.
 */
export function parseClaimsParameter(raw: string): ClaimsRequest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw redirectErrors.invalidRequest('claims must be a JSON object.');
  }
  if (!isObject(parsed)) throw redirectErrors.invalidRequest('claims must be a JSON object.');
  const out: ClaimsRequest = {};
  for (const place of ['id_token', 'userinfo'] as const) {
    const members = parsed[place];
    if (members === undefined) continue;
    if (!isObject(members)) throw redirectErrors.invalidRequest(`claims.${place} must be a JSON object.`);
    for (const [name, member] of Object.entries(members)) {
      const problem = memberProblem(place, name, member);
      if (problem) throw redirectErrors.invalidRequest(problem);
    }
    out[place] = members as Record<string, ClaimRequest | null>;
  }
  return out;
}

/** The scopes the claims request's person claims belong to (email → email, name → profile). */
export function scopesOfClaims(claims: ClaimsRequest | undefined): Scope[] {
  const names = [...Object.keys(claims?.id_token ?? {}), ...Object.keys(claims?.userinfo ?? {})];
  return names.flatMap((n) => (CLAIM_SCOPES[n] ? [CLAIM_SCOPES[n]] : []));
}

/**
 * The id_token `sub` the claims request names with a value (OIDC Core §5.5.1): only that person may be
 * answered for; a session of someone else counts as no session.
 */
export function requestedSubject(claims: ClaimsRequest | undefined): string | undefined {
  const value = claims?.id_token?.sub?.value;
  return typeof value === 'string' ? value : undefined;
}

/** The sign-in claims (acr, amr, auth_time) the claims request asks /userinfo for. */
export const userinfoSignInClaims = (claims: ClaimsRequest | undefined): SignInClaim[] =>
  SIGN_IN_CLAIMS.filter((c) => claims?.userinfo?.[c] !== undefined);

/**
 * The acr values a request makes essential: an `essential: true` acr member of the claims parameter
 * (id_token or userinfo), with its value or values. acr_values alone is voluntary (OIDC Core §3.1.2.1).
 */
export function essentialAcr(claims: ClaimsRequest | undefined): string[] | undefined {
  for (const place of ['id_token', 'userinfo'] as const) {
    const member = claims?.[place]?.acr;
    if (!member?.essential) continue;
    const values = (member.values ?? (member.value === undefined ? [] : [member.value])) as string[];
    if (values.length > 0) return values;
  }
  return undefined;
}

/** What a request (and its app's minimum) demand of the person's verification level. */
export interface AssuranceDemand {
  /** Essential acr values: one of them must be met. */
  acr?: string[];
  /** The app's minimum verification level. */
  minLevel?: VerificationLevel;
}

/** Why a person at `level` cannot continue (the error for the app, and the level wanted, for the page), or null. */
export function unmetDemand(
  level: VerificationLevel,
  demand: AssuranceDemand,
): { error: RedirectError; wanted: string } | null {
  if (demand.minLevel && RANK[level] < RANK[demand.minLevel])
    return {
      wanted: demand.minLevel,
      error: unmetAuthenticationRequirements(
        `This app requires verification level ${demand.minLevel} (${ACR[demand.minLevel]}); the person is verified at level ${level}.`,
      ),
    };
  if (demand.acr && !demand.acr.some((acr) => satisfies(level, acr)))
    return {
      wanted: [...new Set(demand.acr.map((acr) => levelOf(acr) ?? acr))].join(' or '),
      error: unmetAuthenticationRequirements(
        `The request requires acr ${demand.acr.join(' or ')}; the person is verified at level ${level} (${ACR[level]}).`,
      ),
    };
  return null;
}

/** OpenID Connect Unmet Authentication Requirements 1.0. */
export const unmetAuthenticationRequirements = (description: string) =>
  new RedirectError('unmet_authentication_requirements', description);
