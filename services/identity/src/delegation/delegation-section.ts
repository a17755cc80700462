import { requestActor } from '@attest/common';
import { checkedValue } from '../kernel/form-check';
import { html } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';
import type { AccountSection } from '../kernel/account-section';
import type { Delegations } from './delegations';
import { endAgentDocs } from './delegation.openapi';
import { END_AGENT_FORM } from './delegation-forms';

const day = (d: Date) => d.toISOString().slice(0, 10);
const when = (d: Date) => {
  const iso = d.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
};

/** The scopes of one resource, from the stored `<uri>#<scope>`. */
const scopesAt = (scopes: string[], uri: string) =>
  scopes.filter((s) => s.startsWith(`${uri}#`)).map((s) => s.slice(uri.length + 1));

/**
 * **Agents acting for you** on the account page (issue 42): each agent that exchanged one of the person's
 * tokens, for which resources and scopes, since when, last used; ending one stops its delegated tokens and
 * its refresh tokens at once.
 */
export function delegationSection(delegations: Pick<Delegations, 'listFor' | 'end'>): AccountSection {
  return {
    async render(userId, csrf) {
      const agents = await delegations.listFor(userId);
      const csrfField = hiddenFields({ csrf });
      return html`<h2 id="agents">Agents acting for you</h2>
${
  agents.length === 0
    ? html`<p class="muted">No agent acts for you.</p>`
    : html`<ul class="items" aria-labelledby="agents">${agents.map(
        (a) => html`<li data-agent="${a.agentId}"><span><strong>${a.agentName}</strong><br>
<span class="muted">${a.resources.length === 0 ? 'may ask for your approval (a login hint token you made); ' : ''}${a.resources.map((uri) => html`<span data-resource="${uri}">${uri}: ${scopesAt(a.scopes, uri).join(' ') || 'no scope'}</span>; `)}since ${day(a.createdAt)} · last used ${when(a.lastUsedAt)}</span></span>
<form method="post" action="/account/agents/end">${csrfField}${hiddenFields({ agent_id: a.agentId })}<button type="submit" class="danger" aria-label="Stop ${a.agentName} acting for you">End</button></form></li>`,
      )}</ul>
<p class="muted">Ending an agent stops the tokens it got to act for you, and its refresh tokens, at once.</p>`
}`;
    },
    notices: { 'agent-ended': 'Agent ended: it no longer acts for you.' },
    forms: [
      {
        path: '/account/agents/end',
        schema: END_AGENT_FORM,
        docs: endAgentDocs,
        async handle(req, userId) {
          const agentId = checkedValue(END_AGENT_FORM, req.body, 'agent_id') ?? '';
          if (!agentId || !(await delegations.end(userId, agentId, requestActor(req, 'user', userId))))
            return { error: 'That agent does not act for you.', status: 404 };
          return { notice: 'agent-ended' };
        },
      },
    ],
  };
}
