import type { Request, Response, Router } from 'express';
import { AppError, endpoint, type EndpointDocs } from '@attest/common';
import { frameOf, portalActor, portalLocals, requireRole } from './portal-guard';
import type { AddressChallengeView, ReceivingAddressView } from './transactions-admin';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import { checkedValue } from '../kernel/form-check';
import { addressesPage } from './portal-addresses-page';
import { PORTAL_ADDRESS_FORMS } from './portal-addresses-forms';
import { portalAddressDocs as docs } from './portal-addresses-route.openapi';
import type { PortalDeps, PortalGuardDeps, PortalServices } from './portal-deps';
import type { PortalForm } from './portal-notice';

/** What the receiving-address pages use: the guard's, the audit trail, the transactions admin API. */
export type PortalAddressDeps = PortalGuardDeps & Pick<PortalDeps, 'audit'> & Pick<PortalServices, 'transactionsAdmin'>;

/**
 * An app's receiving addresses in the portal (issue 40, item 1): members read them; an owner adds one by
 * signing a challenge with it (the portal never adds one on its own word: that is an operator's) and removes
 * one. They live in the transactions service: the portal calls its admin API and records here who asked.
 */
export function portalAddressRoutes(router: Router, deps: PortalAddressDeps, form: PortalForm): void {
  const tx = deps.transactionsAdmin;
  const render = async (
    req: Request,
    res: Response,
    extra: {
      notice?: string;
      error?: string;
      challenge?: AddressChallengeView;
      asked?: { chain?: string; address?: string };
    } = {},
    status = 200,
  ) => {
    const { app, role } = portalLocals(res) as { app: App; role: MemberRole };
    let addresses: ReceivingAddressView[] | null = null;
    let error = extra.error;
    try {
      addresses = await tx.receivingAddresses(app.id);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      error ??= err.detail;
      status = status === 200 ? err.status : status;
    }
    addressesPage(
      res,
      frameOf(deps, req, res, { notice: extra.notice, error }),
      { app, role, addresses, challenge: extra.challenge, asked: extra.asked },
      status,
    );
  };
  const field = (schema: keyof typeof PORTAL_ADDRESS_FORMS, req: Request, name: string) =>
    checkedValue(PORTAL_ADDRESS_FORMS[schema], req.body, name)?.trim() ?? '';

  const challenge = async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const asked = { chain: field('challenge', req, 'chain'), address: field('challenge', req, 'address') };
    try {
      const made = await tx.addressChallenge(app.id, asked.chain, asked.address);
      await render(req, res, { challenge: made });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      await render(req, res, { error: err.detail, asked }, err.status);
    }
  };

  const prove = async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const { actor, detail } = portalActor(req, res);
    let added: ReceivingAddressView;
    try {
      added = await tx.proveAddress(app.id, field('prove', req, 'challenge_id'), field('prove', req, 'signature'));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return render(req, res, { error: `${err.detail} Ask for a new message to sign.` }, err.status);
    }
    await deps.audit.record({
      type: 'receiving_address.added',
      actor,
      subject: app.id,
      detail: { ...detail, app_id: app.id, chain: added.chain, address: added.address, proof: added.proof },
    });
    await render(req, res, { notice: `Receiving address ${added.address} on ${added.chain} added.` });
  };

  const remove = async (req: Request, res: Response) => {
    const { app } = portalLocals(res) as { app: App };
    const { actor, detail } = portalActor(req, res);
    let removed: ReceivingAddressView;
    try {
      removed = await tx.removeReceivingAddress(app.id, field('remove', req, 'chain'), field('remove', req, 'address'));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return render(req, res, { error: err.detail }, err.status);
    }
    await deps.audit.record({
      type: 'receiving_address.removed',
      actor,
      subject: app.id,
      detail: { ...detail, app_id: app.id, chain: removed.chain, address: removed.address },
    });
    await render(req, res, { notice: `Receiving address ${removed.address} on ${removed.chain} removed.` });
  };

  const signedIn = form(PORTAL_ADDRESS_FORMS.remove).slice(0, 2);
  endpoint(
    router,
    '/portal/apps/:id/addresses',
    {
      GET: [...signedIn, requireRole(deps, 'viewer'), (req, res) => render(req, res)],
      POST: [...form(PORTAL_ADDRESS_FORMS.prove), requireRole(deps, 'owner'), prove],
    },
    { ...docs.addresses, ...docs.prove } as EndpointDocs,
  );
  endpoint(
    router,
    '/portal/apps/:id/addresses/challenge',
    { POST: [...form(PORTAL_ADDRESS_FORMS.challenge), requireRole(deps, 'owner'), challenge] },
    docs.challenge,
  );
  endpoint(
    router,
    '/portal/apps/:id/addresses/remove',
    { POST: [...form(PORTAL_ADDRESS_FORMS.remove), requireRole(deps, 'owner'), remove] },
    docs.remove,
  );
}
