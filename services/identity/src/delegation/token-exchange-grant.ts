import type { NextFunction, Request, Response } from 'express';
import { requestActor, sendJson } from '@attest/common';
import type { App } from '../kernel/app-store';
import { grantField, tokenDpopJkt, type TokenGrantDeps } from '../oauth';
import type { Delegations } from './delegations';

/** What grant_type=urn:ietf:params:oauth:grant-type:token-exchange at /token uses. */
export interface TokenExchangeGrantDeps extends TokenGrantDeps {
  delegations: Pick<Delegations, 'exchange'>;
}

/**
 * POST /token grant_type=urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693 §2; issue 42), after the
 * app's authentication: subject_token (a person's access token) and subject_token_type, optionally
 * actor_token and actor_token_type (the agent's own client_credentials token), resource or audience and scope
 * (narrowed, never widened), requested_token_type, and a DPoP proof as at every grant. Answers an access token
 * acting for the person (`act`), with issued_token_type.
 */
export function tokenExchangeGrant(deps: TokenExchangeGrantDeps) {
  return async (req: Request, res: Response, _next: NextFunction) => {
    const agent = res.locals.app as App;
    const fields = {
      subjectToken: grantField(req, 'subject_token'),
      subjectTokenType: grantField(req, 'subject_token_type'),
      actorToken: grantField(req, 'actor_token'),
      actorTokenType: grantField(req, 'actor_token_type'),
      requestedTokenType: grantField(req, 'requested_token_type'),
      resource: grantField(req, 'resource'),
      audience: grantField(req, 'audience'),
      scope: grantField(req, 'scope'),
    };
    const jkt = await tokenDpopJkt(deps, req, res, agent);
    const result = await deps.delegations.exchange(
      { agent, ...fields, ...(jkt ? { jkt } : {}) },
      { ...requestActor(req, 'anonymous', null), type: 'app', id: agent.id },
    );
    sendJson(res, result);
  };
}
