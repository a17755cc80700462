import { AppError } from '@attest/common';
import type { AccessTokenClaims, ActorClaim, TokenOrigin } from '../kernel/tokens';
import type { ResourceDirectory } from '../resources';
import type { App } from '../kernel/app-store';

/**
 * The checks of a token exchange's request (RFC 8693 §2.1) that need no state: its token types, its one
 * target, its narrowed scopes; and what a new token's act chain and origin are made of.
 */

/** RFC 8693 §3: the one token type exchanged and issued here. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** What an agent sends to /token (RFC 8693 §2.1), each field as grantField read it. */
export interface ExchangeRequest {
  agent: App;
  subjectToken?: string;
  subjectTokenType?: string;
  actorToken?: string;
  actorTokenType?: string;
  requestedTokenType?: string;
  resource?: string;
  audience?: string;
  scope?: string;
  /** The DPoP key thumbprint the new token is bound to. */
  jkt?: string;
}

export const refuse = (error: string, detail: string, attribute: string) => new AppError(error, 400, detail, attribute);
export const depthOf = (act: ActorClaim | undefined): number => (act ? 1 + depthOf(act.act) : 0);
/** The agents of an act chain, the current one first. */
export const agentsOf = (act: ActorClaim | undefined): string[] => (act ? [act.sub, ...agentsOf(act.act)] : []);
/** A new token's source: the subject token's own (an exchange of an exchange), with the subject token's id after it. */
export const originOf = (subject: AccessTokenClaims): TokenOrigin =>
  subject.origin
    ? { ...subject.origin, jti: [...subject.origin.jti, subject.jti] }
    : { client_id: subject.client_id, jti: [subject.jti], iat: subject.iat };

/** subject_token and the token types (RFC 8693 §2.1): an access token in, an access token out. */
export function checkExchangeTypes(input: ExchangeRequest): void {
  if (input.subjectToken === undefined)
    throw refuse('invalid_request', 'subject_token is required: the person’s access token.', 'subject_token');
  if (input.subjectTokenType !== ACCESS_TOKEN_TYPE)
    throw refuse('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}.`, 'subject_token_type');
  if (input.requestedTokenType !== undefined && input.requestedTokenType !== ACCESS_TOKEN_TYPE)
    throw refuse(
      'invalid_request',
      `requested_token_type may only be ${ACCESS_TOKEN_TYPE}: this server issues access tokens.`,
      'requested_token_type',
    );
  if ((input.actorToken === undefined) !== (input.actorTokenType === undefined))
    throw refuse('invalid_request', 'actor_token and actor_token_type go together (RFC 8693 §2.1).', 'actor_token');
  if (input.actorTokenType !== undefined && input.actorTokenType !== ACCESS_TOKEN_TYPE)
    throw refuse('invalid_request', `actor_token_type must be ${ACCESS_TOKEN_TYPE}.`, 'actor_token_type');
}

/** RFC 8707 / RFC 8693 §2.1: the one resource of the new token, the subject token's (never another). */
export async function exchangeTarget(
  deps: { resources: Pick<ResourceDirectory, 'findByUri'>; issuer: string },
  subject: AccessTokenClaims,
  input: ExchangeRequest,
) {
  if (input.resource !== undefined && input.audience !== undefined && input.resource !== input.audience)
    throw refuse(
      'invalid_target',
      'resource and audience name different targets: a token here has one audience.',
      'audience',
    );
  const asked = input.resource ?? input.audience;
  const attribute = input.resource !== undefined ? 'resource' : 'audience';
  if (subject.aud === deps.issuer)
    throw refuse(
      'invalid_target',
      'subject_token is not for a resource (it is a sign-in’s token for /userinfo): exchange a token the ' +
        'person gave for a registered resource (RFC 8707).',
      asked === undefined ? 'subject_token' : attribute,
    );
  if (asked !== undefined && asked !== subject.aud)
    throw refuse(
      'invalid_target',
      `${attribute} must be ${subject.aud}, the resource of subject_token: an exchange never widens the audience.`,
      attribute,
    );
  const resource = await deps.resources.findByUri(subject.aud);
  if (!resource) throw refuse('invalid_target', `The resource ${subject.aud} is no longer registered here.`, attribute);
  return resource;
}

/** The scopes of the new token: those asked (all of the subject token's when none are), never more. */
export function narrowedScopes(subject: AccessTokenClaims, scope: string | undefined, offered: string[]): string[] {
  const held = subject.scope.split(' ').filter(Boolean);
  const asked = scope === undefined ? held : [...new Set(scope.split(' ').filter(Boolean))];
  if (scope !== undefined && asked.length === 0)
    throw refuse('invalid_scope', 'scope names no scope: leave it out to keep all of subject_token’s.', 'scope');
  const wider = asked.find((s) => !held.includes(s));
  if (wider !== undefined)
    throw refuse(
      'invalid_scope',
      `scope ${wider} is not in subject_token (it has: ${held.join(' ') || 'none'}): an exchange never widens.`,
      'scope',
    );
  const gone = asked.find((s) => !offered.includes(s));
  if (gone !== undefined)
    throw refuse('invalid_scope', `The resource ${subject.aud} no longer offers the scope ${gone}.`, 'scope');
  return asked;
}
