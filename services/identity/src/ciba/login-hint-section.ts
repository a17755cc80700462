import { requestActor } from '@attest/common';
import type { AccountSection } from '../kernel/account-section';
import type { AppDirectory } from '../kernel/directories';
import { checkedValue } from '../kernel/form-check';
import { html } from '../kernel/html';
import { hiddenFields, whoAsks } from '../kernel/pages';
import { LOGIN_HINT_FORM } from './ciba-forms';
import { loginHintDocs } from './login-hint-section.openapi';
import type { LoginHintTokens } from './login-hint-tokens';

export interface LoginHintSectionDeps {
  apps: Pick<AppDirectory, 'find'>;
  hints: Pick<LoginHintTokens, 'issue'>;
  /** The delegation feature's: the agent is listed among those acting for the person, and can be ended there. */
  agents: { named(userId: string, agentId: string, actor: ReturnType<typeof requestActor>): Promise<void> };
}

/**
 * **Let an agent ask for your approval** on the account page (issue 42, CIBA Core §7.1 login_hint_token): an
 * agent that never signed the person in (an assistant, a script) cannot name them at /bc-authorize; the person
 * makes it a login_hint_token here, by the agent's client id, and gives it to the agent. The token names them
 * to that agent (sealed: the agent learns their sub only from what they approve), for 30 days; the agent is listed under "Agents acting for you", and
 * ending it there stops the token. Every request still waits for the person's approval.
 */
export function loginHintSection(deps: LoginHintSectionDeps): AccountSection {
  return {
    async render(_userId, csrf) {
      return html`<h2 id="login-hints">Let an agent ask for your approval</h2>
<p class="muted">An agent that has not signed you in (an assistant, a script) can send you requests to approve once it
has a login hint token from you. Each request still waits here for you to approve or deny it.</p>
<form method="post" action="/account/login-hint-tokens">${hiddenFields({ csrf })}
<label for="login-hint-client-id">The agent’s client id</label><input id="login-hint-client-id" name="client_id" required autocomplete="off" spellcheck="false">
<button type="submit">Make a login hint token</button></form>`;
    },
    notices: {},
    forms: [
      {
        path: '/account/login-hint-tokens',
        schema: LOGIN_HINT_FORM,
        docs: loginHintDocs,
        async handle(req, userId) {
          const clientId = (checkedValue(LOGIN_HINT_FORM, req.body, 'client_id') ?? '').trim();
          const app = clientId ? await deps.apps.find(clientId).catch(() => null) : null;
          if (!app || app.disabledAt || !app.backchannelTokenDeliveryMode)
            return {
              error: 'No app that asks for approvals (CIBA) has that client id: check it with the agent.',
              status: 404,
            };
          await deps.agents.named(userId, app.id, requestActor(req, 'user', userId));
          const hint = deps.hints.issue({ aud: app.id, userId });
          const who = whoAsks({ id: app.id, name: app.name, registration: app.registration });
          const until = new Date(hint.exp * 1000).toISOString();
          return {
            page: {
              title: 'Your login hint token',
              body: html`<h1>A login hint token for ${who.title}</h1>
${who.note}
<p>Give this to the agent. It lets <strong>${who.title}</strong> send you requests to approve (it names you, nothing
more) until <time datetime="${until}">${until.slice(0, 10)}</time>. It is shown once: Attest keeps no copy.</p>
<label for="login-hint-token">Login hint token</label>
<textarea id="login-hint-token" readonly rows="6" cols="60" spellcheck="false">${hint.token}</textarea>
<p class="muted">To stop it, end ${who.title} under “Agents acting for you” on your account page.</p>
<p><a href="/account#agents">Back to your account</a></p>`,
            },
          };
        },
      },
    ],
  };
}
