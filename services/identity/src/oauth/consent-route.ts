import type { Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import { endpoint, formBody, requestActor } from '@attest/common';
import { redirectErrors } from './oauth-error';
import { consentScopes } from './authorization-step';
import { consentKey } from '../kernel/revocations';
import { askedScopes, consentPage, errorPage } from '../kernel/pages';
import {
  expiredInteraction,
  finishWithError,
  interactionBinding,
  postedInteraction,
  proceed,
} from './authorization-flow';
import type { KernelServices, TokenServices } from '../kernel/services';
import type { ProceedDeps } from './authorization-flow';
import { firstFailure } from '../kernel/form-check';
import { CONSENT_FORM, INTERACTION_QUERY } from './oauth-forms';
import { csrfToken } from '../kernel/csrf';
import { currentSession } from '../kernel/session-cookie';
import { usePageErrors } from '../kernel/page-errors';
import { requireFormContentType } from '../kernel/http-steps';
import { consentDocs } from './consent-route.openapi';

export { CONSENT_FORM, INTERACTION_QUERY };

/** GET|POST /consent: the user approves or denies the app's scopes. */
/** What /consent uses (and proceed, which moves the request on). */
export type ConsentRouteDeps = ProceedDeps &
  Pick<KernelServices, 'audit'> &
  Pick<TokenServices, 'revocations' | 'tokens'>;

export function consentRoute(router: Router, ctx: ConsentRouteDeps): void {
  const show = async (req: Request, res: Response) => {
    const id = req.query.interaction as string;
    const interaction = firstFailure(INTERACTION_QUERY, req.query)
      ? null
      : await ctx.interactions.find(id, interactionBinding(ctx, req, res));
    if (!interaction) return expiredInteraction(res);
    const current = await currentSession(ctx, req);
    if (!current) return res.redirect(302, `/signin?interaction=${id}`);
    const app = await ctx.apps.find(interaction.request.clientId);
    consentPage(res, {
      interaction: id,
      csrf: csrfToken(ctx, req, res, id),
      client: {
        id: interaction.request.clientId,
        name: app?.name ?? interaction.request.clientId,
        registration: app?.registration ?? 'operator',
      },
      redirectUri: interaction.request.redirectUri,
      // each scope asked: OpenID Connect's, the resource's, offline access
      scopes: askedScopes(interaction.request),
      resource: interaction.request.resource && (interaction.request.resourceName ?? interaction.request.resource.uri),
    });
  };

  const submit = async (req: Request, res: Response) => {
    const posted = await postedInteraction(ctx, req, res);
    if (!posted) return;
    const { id, interaction } = posted;
    const current = await currentSession(ctx, req);
    if (!current) return res.redirect(303, `/signin?interaction=${id}`);
    if (firstFailure(CONSENT_FORM, req.body, ['decision']))
      return errorPage(res, 400, {
        code: 'invalid_parameter',
        detail: 'decision must be approve or deny.',
        attribute: 'decision',
      });
    if ((req.body as { decision: 'approve' | 'deny' }).decision === 'deny')
      return finishWithError(ctx, res, id, interaction.request, redirectErrors.accessDenied(), 303);
    // approved again in the second of a withdrawal: its new tokens must not count as issued before it
    await ctx.revocations.pastRevocationOf(
      consentKey(current.session.userId, interaction.request.clientId),
      ctx.tokens.now,
    );
    const scopes = consentScopes(interaction.request);
    await ctx.consents.grant(current.session.userId, interaction.request.clientId, scopes);
    await ctx.audit.record({
      type: 'consent.granted',
      actor: requestActor(req, 'user', current.session.userId),
      subject: current.session.userId,
      detail: { app_id: interaction.request.clientId, scopes },
    });
    const updated = { ...interaction, consented: true };
    await ctx.interactions.update(id, updated);
    await proceed(ctx, res, id, updated, current.session, 303);
  };

  endpoint(
    router,
    '/consent',
    {
      GET: [cookieParser(), show],
      POST: [cookieParser(), requireFormContentType, formBody(ctx.config.BODY_LIMIT), submit],
    },
    consentDocs,
  );
  usePageErrors(router, '/consent');
}
