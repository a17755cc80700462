import { AppError, constantTimeEqual, type AuditActor, type AuditLog } from '@attest/common';
import type { App } from '../kernel/app-store';
import type { AppDirectory, ConsentDirectory, SubjectDirectory, UserDirectory } from '../kernel/directories';
import { pairwiseSubject } from '../kernel/ids';
import { consentKey, type Revocations } from '../kernel/revocations';
import type { AccessTokenClaims, ActorClaim, TokenService } from '../kernel/tokens';
import type { User } from '../kernel/user-store';
import { grantHolder } from '../oauth';
import { consentCoversToken, type ResourceDirectory } from '../resources';
import type { Delegation, DelegationStore } from './delegation-store';
import {
  ACCESS_TOKEN_TYPE,
  agentsOf,
  type ExchangeRequest,
  checkExchangeTypes,
  depthOf,
  exchangeTarget,
  narrowedScopes,
  originOf,
  refuse,
} from './exchange-checks';

export { ACCESS_TOKEN_TYPE, type ExchangeRequest } from './exchange-checks';

/** RFC 8693 §3: the one token type exchanged and issued here. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** An act chain (RFC 8693 §4.1) holds at most this many agents: the person's agent, and the one it hands on to. */
export const MAX_ACT_DEPTH = 2;
/** A delegated token comes from at most this many tokens (each of its exchanges, the same agent's again included). */
export const MAX_EXCHANGES = 4;

/** Revoked before this moment: the agent's delegated tokens, and the tokens it may no longer exchange. */
export const delegationKey = (userId: string, agentId: string) => `delegation:${userId}:${agentId}`;

export interface DelegationsDeps {
  store: DelegationStore;
  tokens: Pick<TokenService, 'verifyAccessToken' | 'accessToken' | 'now'>;
  revocations: Pick<Revocations, 'isRevoked' | 'revokedBeforeIssue' | 'revokeBefore' | 'revoke'>;
  apps: Pick<AppDirectory, 'find'>;
  subjects: Pick<SubjectDirectory, 'userIdFor' | 'remember'>;
  users: Pick<UserDirectory, 'findById'>;
  consents: Pick<ConsentDirectory, 'find'>;
  resources: Pick<ResourceDirectory, 'findByUri'>;
  /** The refresh feature's: ends the agent's refresh token families for the person. */
  refresh: { endFor(userId: string, clientId: string): Promise<void> };
  audit: Pick<AuditLog, 'record'>;
}

export interface DelegationsOptions {
  issuer: string;
  secret: string;
  /** TOKEN_EXCHANGE_TTL_SECONDS: a delegated token's lifetime (never past its subject token's). */
  ttlSeconds: number;
  /** How long an end is remembered: the longest any token it stops may live (seconds). */
  endRememberedSeconds: number;
}

/** RFC 8693 §2.2.1. */
export interface ExchangeResponse {
  access_token: string;
  issued_token_type: typeof ACCESS_TOKEN_TYPE;
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope: string;
}

/** "Last used" is written at most this often for a person and agent whose resource and scopes are known. */
const LAST_USED_EVERY_MS = 60_000;
/** How many (person, agent) pairs the write-behind of "last used" remembers. */
const KNOWN_MAX = 50_000;
/** How many (agent, person) pairwise subjects are remembered (an HMAC each; nothing secret). */
const SUBJECTS_MAX = 10_000;

/**
 * Delegation (issue 42, RFC 8693): an agent exchanges a person's access token for a short-lived one that
 * acts for the person (`act`), narrowed, never widened; the person sees each agent on the account page and
 * ends it there.
 */
export class Delegations {
  /** What this process last wrote of each (person, agent): its grants (`<uri>#<scope>`, and uris), and when. */
  private readonly written = new Map<string, { grants: Set<string>; at: number }>();
  /** How many ends began here: a write under way when one began is not remembered. */
  private ends = 0;
  /** The pairwise subject of each (agent, person) exchanged for lately: the same HMAC every exchange. */
  private readonly subjects = new Map<string, string>();

  constructor(
    private readonly deps: DelegationsDeps,
    private readonly options: DelegationsOptions,
  ) {}

  /** grant_type=urn:ietf:params:oauth:grant-type:token-exchange, after the agent's authentication. */
  async exchange(input: ExchangeRequest, actor: AuditActor): Promise<ExchangeResponse> {
    const { agent } = input;
    checkExchangeTypes(input);
    if (agent.public)
      throw refuse(
        'unauthorized_client',
        'A public client cannot act for people: token exchange needs an app that authenticates itself.',
        'grant_type',
      );
    // RFC 7591 §2: a client that registered itself holds to its grant_types, which cannot hold this grant
    if (agent.registration !== 'operator')
      throw refuse(
        'unauthorized_client',
        'This client registered itself, and its grant_types cannot hold token exchange: acting for people is ' +
          'for apps the operator made (pnpm manage app create … --may-act-for-users).',
        'grant_type',
      );
    if (input.actorToken !== undefined) await this.checkActor(input.actorToken, agent);
    const subject = await this.subjectOf(input.subjectToken!);
    // RFC 9449: a sender-constrained token stays so; it is exchanged only with a proof by its key, which binds the new one
    if (subject.cnf && (input.jkt === undefined || !constantTimeEqual(subject.cnf.jkt, input.jkt)))
      throw new AppError(
        'invalid_dpop_proof',
        400,
        'subject_token is DPoP-bound: the exchange needs a DPoP proof signed by the key it is bound to.',
        'DPoP',
      );
    const user = await this.holderOf(subject);
    if (!user) throw refuse('invalid_grant', 'subject_token is no longer active (revoked or ended).', 'subject_token');
    // when the person gave the token it all comes from: an agent they ended since takes none of theirs from before,
    // not even through another agent's delegated token issued after the end
    const givenAt = subject.origin?.iat ?? subject.iat;
    if (this.deps.revocations.revokedBeforeIssue(delegationKey(user.id, agent.id), givenAt))
      throw refuse(
        'invalid_grant',
        'The person ended this agent’s access after subject_token was issued: it needs a newer token of theirs.',
        'subject_token',
      );
    // a token the person gave this agent (its own authorization request, consented to), or, with the
    // operator's leave, a token of theirs another app got
    if (subject.client_id !== agent.id && !agent.mayActForUsers)
      throw refuse(
        'unauthorized_client',
        'This app may exchange only tokens issued to it: acting for people with another app’s tokens needs ' +
          'may_act_for_users (pnpm manage app update APP_ID --may-act-for-users).',
        'subject_token',
      );
    const act: ActorClaim =
      subject.act?.sub === agent.id ? subject.act : { sub: agent.id, ...(subject.act ? { act: subject.act } : {}) };
    if (depthOf(act) > MAX_ACT_DEPTH)
      throw refuse(
        'invalid_request',
        `subject_token already acts through ${depthOf(subject.act)} agents: a chain holds at most ${MAX_ACT_DEPTH}.`,
        'subject_token',
      );
    if ((subject.origin?.jti.length ?? 0) >= MAX_EXCHANGES)
      throw refuse(
        'invalid_request',
        `subject_token comes from ${MAX_EXCHANGES} exchanges already: exchange a token nearer the person's own.`,
        'subject_token',
      );
    const resource = await exchangeTarget(
      { resources: this.deps.resources, issuer: this.options.issuer },
      subject,
      input,
    );
    const scopes = narrowedScopes(subject, input.scope, resource.scopes);
    const sub = this.pairwiseSubjectOf(agent.id, user.id);
    await this.deps.subjects.remember(agent.id, sub, user.id);
    const nowSeconds = Math.floor(this.deps.tokens.now() / 1000);
    const ttlSeconds = Math.min(this.options.ttlSeconds, subject.exp - nowSeconds);
    const { token, claims } = await this.deps.tokens.accessToken({
      sub,
      clientId: agent.id,
      scopes,
      aud: resource.uri,
      act,
      // a delegated token from before origin was carried has none to pass on
      ...(subject.act && !subject.origin ? {} : { origin: originOf(subject) }),
      ttlSeconds,
      // the session the person's token came from: signing out there ends this one too
      ...(subject.sid ? { sid: subject.sid } : {}),
      ...(subject.acr !== undefined && subject.auth_time !== undefined
        ? { signIn: { acr: subject.acr, authTime: subject.auth_time, ...(subject.amr ? { amr: subject.amr } : {}) } }
        : {}),
      ...(input.jkt ? { jkt: input.jkt } : {}),
      alg: agent.accessTokenSignedResponseAlg,
    });
    // after the token is signed: an end that comes after this write stops the token (issued before it); an end
    // that came before keeps the row ended, and the token is revoked here before anyone sees it
    if (!(await this.used(user.id, agent.id, resource.uri, scopes, givenAt))) {
      await this.deps.revocations.revoke([claims.jti], new Date(claims.exp * 1000));
      throw refuse(
        'invalid_grant',
        'The person ended this agent’s access after subject_token was issued: it needs a newer token of theirs.',
        'subject_token',
      );
    }
    await this.deps.audit.record({
      type: 'delegation.exchanged',
      actor,
      // the person as this agent knows them (pairwise), never their account id
      subject: sub,
      detail: {
        agent_id: agent.id,
        resource: resource.uri,
        scope: claims.scope,
        act,
        subject_client_id: subject.client_id,
        token_id: claims.jti,
      },
    });
    return {
      access_token: token,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: input.jkt ? 'DPoP' : 'Bearer',
      expires_in: ttlSeconds,
      scope: claims.scope,
    };
  }

  /**
   * The person behind a delegated token (one with `act`), or null when it no longer acts: revoked (itself,
   * or its session ended), its person gone or disabled; or, for the agent and every agent of its act chain,
   * disabled, or ended or its consent withdrawn by the person after the token was issued; or its origin (the
   * app the person's own token was issued to) disabled or its consent withdrawn since, or a token it was
   * exchanged from revoked. A delegated token never outlives what it came from.
   */
  async holder(claims: AccessTokenClaims): Promise<User | null> {
    const { revocations } = this.deps;
    if (await revocations.isRevoked(claims.jti, typeof claims.sid === 'string' ? claims.sid : undefined)) return null;
    const userId = await this.deps.subjects.userIdFor(claims.client_id, claims.sub);
    const user = userId ? await this.deps.users.findById(userId) : null;
    if (!user || user.disabledAt) return null;
    // an end or a withdrawal stops what comes from a token the person gave before it (the origin's iat), at any depth
    const givenAt = claims.origin?.iat ?? claims.iat;
    const agents = new Set([claims.client_id, ...agentsOf(claims.act)]);
    for (const agentId of agents)
      if (
        !(await this.enabled(agentId)) ||
        revocations.revokedBeforeIssue(delegationKey(user.id, agentId), givenAt) ||
        revocations.revokedBeforeIssue(consentKey(user.id, agentId), givenAt)
      )
        return null;
    const { origin } = claims;
    if (origin) {
      if (!agents.has(origin.client_id) && !(await this.enabled(origin.client_id))) return null;
      if (revocations.revokedBeforeIssue(consentKey(user.id, origin.client_id), givenAt)) return null;
      for (const jti of origin.jti) if (await revocations.isRevoked(jti)) return null;
    }
    return user;
  }

  private async enabled(appId: string): Promise<boolean> {
    const app = await this.deps.apps.find(appId);
    return !!app && !app.disabledAt;
  }

  /** Whether a delegated token still acts for its person (the introspection of apps and resource servers). */
  readonly holds = async (claims: AccessTokenClaims): Promise<boolean> => (await this.holder(claims)) !== null;

  /** The agents acting for the person, with their names, the last used first. */
  async listFor(userId: string): Promise<(Delegation & { agentName: string })[]> {
    const rows = await this.deps.store.listForUser(userId);
    return Promise.all(
      rows.map(async (d) => ({ ...d, agentName: (await this.deps.apps.find(d.agentId))?.name ?? d.agentId })),
    );
  }

  /**
   * The person names an agent for approvals (a login_hint_token, CIBA): it is listed among the agents acting
   * for them from now, and ending it there stops the hint. Audited with the agent's pairwise subject.
   */
  async named(userId: string, agentId: string, actor: AuditActor): Promise<void> {
    await this.deps.store.named(userId, agentId, new Date(this.deps.tokens.now()));
    await this.deps.audit.record({
      type: 'delegation.named',
      actor,
      subject: userId,
      detail: { agent_id: agentId, agent_subject: this.pairwiseSubjectOf(agentId, userId) },
    });
  }

  /**
   * Whether a login hint the person made for the agent at `issuedAt` (seconds) still names them: the agent acts
   * for them, and has since before the hint (an end after it, then a new start, leaves the hint ended).
   */
  async namedSince(userId: string, agentId: string, issuedAt: number): Promise<boolean> {
    const row = await this.deps.store.active(userId, agentId);
    return !!row && Math.floor(row.createdAt.getTime() / 1000) <= issuedAt;
  }

  /**
   * The person ends an agent: its delegated tokens stop at once (and every token of theirs issued before
   * now can no longer be exchanged by it), its refresh tokens end. False when it was not acting for them.
   */
  async end(userId: string, agentId: string, actor: AuditActor): Promise<boolean> {
    this.ends++;
    this.written.delete(`${userId} ${agentId}`);
    // ended_at on the tokens' clock: an exchange under way compares its subject token's iat with it
    const ended = await this.deps.store.end(userId, agentId, new Date(this.deps.tokens.now()));
    if (!ended) return false;
    // read after the row is ended: a token an exchange signed before writing to the row is older than this
    const now = this.deps.tokens.now();
    await this.deps.revocations.revokeBefore(
      delegationKey(userId, agentId),
      new Date(now),
      new Date(now + this.options.endRememberedSeconds * 1000),
    );
    await this.deps.refresh.endFor(userId, agentId);
    await this.deps.audit.record({
      type: 'delegation.ended',
      actor,
      subject: userId,
      detail: {
        agent_id: agentId,
        agent_subject: pairwiseSubject(this.options.secret, agentId, userId),
        resources: ended.resources,
      },
    });
    return true;
  }

  /**
   * The row of the person and agent, as the account page shows it: written when the exchange gives it a
   * resource or scope it did not have, and otherwise at most once a minute ("last used" to the minute), so
   * a busy agent costs no write per exchange.
   */
  private async used(
    userId: string,
    agentId: string,
    uri: string,
    scopes: string[],
    subjectIssuedAt: number,
  ): Promise<boolean> {
    const key = `${userId} ${agentId}`;
    const now = this.deps.tokens.now();
    const known = this.written.get(key);
    const grants = [uri, ...scopes.map((s) => `${uri}#${s}`)];
    // written since the last end here (end() forgets the pair first): the row is active
    if (known && now - known.at < LAST_USED_EVERY_MS && grants.every((g) => known.grants.has(g))) return true;
    const ends = this.ends;
    if (!(await this.deps.store.used(userId, agentId, uri, scopes, subjectIssuedAt, new Date(now)))) return false;
    // an end that began meanwhile forgot what was written: not remembered over it
    if (this.ends !== ends) return true;
    if (!known && this.written.size >= KNOWN_MAX) this.written.delete(this.written.keys().next().value as string);
    this.written.set(key, { grants: new Set([...(known?.grants ?? []), ...grants]), at: now });
    return true;
  }

  private pairwiseSubjectOf(agentId: string, userId: string): string {
    const key = `${agentId} ${userId}`;
    let sub = this.subjects.get(key);
    if (sub === undefined) {
      sub = pairwiseSubject(this.options.secret, agentId, userId);
      if (this.subjects.size >= SUBJECTS_MAX) this.subjects.delete(this.subjects.keys().next().value as string);
      this.subjects.set(key, sub);
    }
    return sub;
  }

  /** The agent's own token, if it sends one: its client_credentials token, active. */
  private async checkActor(token: string, agent: App): Promise<void> {
    const result = await this.deps.tokens.verifyAccessToken(token);
    const own =
      result.ok &&
      result.claims.client_id === agent.id &&
      result.claims.sub === agent.id &&
      !result.claims.act &&
      !(await this.deps.revocations.isRevoked(result.claims.jti));
    if (!own)
      throw refuse(
        'invalid_request',
        'actor_token must be an active client_credentials token of the authenticated app (or be left out).',
        'actor_token',
      );
  }

  /** The subject token, verified: one of this issuer's access tokens of a person, not expired. */
  private async subjectOf(token: string): Promise<AccessTokenClaims> {
    const result = await this.deps.tokens.verifyAccessToken(token);
    if (!result.ok)
      throw refuse(
        'invalid_grant',
        result.reason === 'expired'
          ? 'subject_token has expired.'
          : 'subject_token is not an access token issued here (or its signing key was revoked).',
        'subject_token',
      );
    if (result.claims.sub === result.claims.client_id)
      throw refuse(
        'invalid_grant',
        'subject_token is an app’s own token (client_credentials): only a person’s token can be exchanged.',
        'subject_token',
      );
    return result.claims;
  }

  /** The person behind an active subject token, as its introspection would say. */
  private async holderOf(subject: AccessTokenClaims): Promise<User | null> {
    if (subject.act) return this.holder(subject);
    const { apps, consents, subjects, users, revocations } = this.deps;
    // a resource's token: as a resource server's introspection holds it (the resource and each scope still granted)
    const deps = { apps, consents, subjects, users, revocations };
    if (subject.aud === this.options.issuer) return grantHolder(deps, subject);
    return grantHolder(deps, subject, (granted) => consentCoversToken(granted, subject));
  }
}
