import { form, str } from '../kernel/form-schemas';

/** POST /account/agents/end: the form that ends an agent (issue 42). */
export const END_AGENT_FORM = form({
  csrf: str('The page’s CSRF token').required(),
  agent_id: str('The agent (its client id) that is to stop acting for the person').required(),
});
