import type { Request } from 'express';
import type { AppDirectory } from '../kernel/directories';
import { html, type Html } from '../kernel/html';
import { hiddenFields, whoAsks } from '../kernel/pages';
import { SCOPE_DESCRIPTIONS, type Scope } from '../kernel/scopes';
import type { User } from '../kernel/user-store';
import type { Passkeys } from '../signin';
import { detailInWords } from './authorization-details';
import type { BackchannelRequests } from './backchannel-requests';
import type { BackchannelRequest } from './backchannel-store';
import { approvalBinding } from './approval-route';

/** What the last approval form did (Post/Redirect/Get): a fixed list, nothing from the URL reflected. */
const NOTICES: Record<string, string> = {
  approved: 'Approved. The app can now act on what you approved, once.',
  denied: 'Denied. The app was told no.',
};

export interface ApprovalSectionDeps {
  apps: Pick<AppDirectory, 'find'>;
  passkeys: Pick<Passkeys, 'authenticationOptions' | 'listForUser'>;
  ciba: Pick<BackchannelRequests, 'pendingFor'>;
}

/** What the account page hands a section: the request, the person, their session, the page's CSRF token. */
export interface SectionInput {
  req: Request;
  user: User;
  sessionId: string;
  csrf: string;
}

const iso = (d: Date) => d.toISOString();
const describe = (scope: string) => SCOPE_DESCRIPTIONS[scope as Scope] ?? scope;

/**
 * The account page's "Waiting for your approval" (issue 42): each pending backchannel request with who asks
 * (as the consent page names an app), its binding message, each authorization detail in words, what it may
 * read; approve with a passkey (user verification) or the password, or deny with one click.
 */
export function approvalSection(deps: ApprovalSectionDeps) {
  const item = async (r: BackchannelRequest, input: SectionInput, hasPasskeys: boolean): Promise<Html> => {
    const app = await deps.apps.find(r.appId).catch(() => null);
    const who = whoAsks({ id: r.appId, name: app?.name ?? r.appId, registration: app?.registration ?? 'operator' });
    const csrf = hiddenFields({ csrf: input.csrf, request_id: r.id });
    const passkey = hasPasskeys
      ? await deps.passkeys.authenticationOptions(approvalBinding(r.id, input.sessionId))
      : null;
    return html`<li data-approval="${r.id}"><div>
<p><strong>${who.title}</strong> asks you to approve:</p>
${who.note}
${r.bindingMessage ? html`<p>Check that the app shows the same code: <strong data-binding-message>${r.bindingMessage}</strong></p>` : ''}
${
  r.authorizationDetails?.length
    ? html`<ul>${r.authorizationDetails.map((d) => html`<li data-detail-type="${d.type}">${detailInWords(d)}</li>`)}</ul>`
    : html`<p>Signing you in to it (no particular action named).</p>`
}
<p class="muted">It will also get: ${r.scopes.map(describe).join('; ')} · waits until <time datetime="${iso(r.expiresAt)}">${iso(r.expiresAt).slice(11, 16)} UTC</time></p>
${
  passkey
    ? html`<div data-passkey-section hidden><form method="post" action="/account/approvals/approve" data-passkey="authenticate" data-options="${JSON.stringify(passkey.options)}">
${csrf}${hiddenFields({ ceremony: passkey.ceremony, credential: '' })}<button type="submit" data-approve-passkey>Approve with a passkey</button>
<p class="error" data-passkey-status role="status" aria-live="polite"></p></form></div>`
    : ''
}
${
  input.user.passwordHash
    ? html`<form method="post" action="/account/approvals/approve">${csrf}
<label for="approve-password-${r.id}">Your password, to approve</label><input id="approve-password-${r.id}" name="password" type="password" autocomplete="current-password" required>
<button type="submit" data-approve-password>Approve with your password</button></form>`
    : ''
}
<form method="post" action="/account/approvals/deny">${csrf}<button type="submit" class="danger" data-deny>Deny</button></form>
</div></li>`;
  };

  return async (input: SectionInput): Promise<Html | ''> => {
    const notice = input.req.query.approval;
    const said = typeof notice === 'string' && Object.hasOwn(NOTICES, notice) ? NOTICES[notice] : undefined;
    const pending = await deps.ciba.pendingFor(input.user.id);
    if (pending.length === 0) return said ? html`<p class="notice" role="status" id="approval-notice">${said}</p>` : '';
    const hasPasskeys = (await deps.passkeys.listForUser(input.user.id)).length > 0;
    const items = await Promise.all(pending.map((r) => item(r, input, hasPasskeys)));
    return html`<h2 id="approvals">Waiting for your approval</h2>
${said ? html`<p class="notice" role="status" id="approval-notice">${said}</p>` : ''}
<p class="muted">An app acting for you asks you to approve one action. Approving needs your passkey or your password; the app gets what you approved once.</p>
<ul class="items" aria-labelledby="approvals">${items}</ul>`;
  };
}
