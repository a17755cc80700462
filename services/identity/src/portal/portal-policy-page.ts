import type { Response } from 'express';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import { html, type Html } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';
import { appHeading, appNav, frame, type PortalFrame } from './portal-pages';
import type { PaymentPolicyView } from './transactions-admin';

/** What the owner typed, shown again after a refusal (the field at fault marked). */
export interface PolicyAsked {
  underpayment_tolerance_percent?: string;
  flag_overpayment?: string;
  default_expires_in?: string;
  display_name?: string;
  return_origins?: string;
}

/** A text field with its label and hint, marked invalid when the service named it. */
function field(
  name: keyof PolicyAsked,
  label: string,
  hint: string,
  value: string,
  invalid: string | null,
  input: { type?: string; extra?: Html; multiline?: boolean } = {},
): Html {
  const id = `policy-${name.replace(/_/g, '-')}`;
  const wrong = invalid === name;
  const described = `${id}-hint${wrong ? ' portal-error' : ''}`;
  const control = input.multiline
    ? html`<textarea id="${id}" name="${name}" rows="3" spellcheck="false" aria-describedby="${described}"${wrong ? html` aria-invalid="true"` : ''}>${value}</textarea>`
    : html`<input id="${id}" name="${name}" type="${input.type ?? 'text'}" value="${value}" aria-describedby="${described}"${wrong ? html` aria-invalid="true"` : ''}${input.extra ?? ''}>`;
  return html`<label for="${id}">${label}</label>${control}<p class="muted" id="${id}-hint">${hint}</p>`;
}

/**
 * /portal/apps/{id}/payment-policy (issue 44): how the app's payment requests are settled (underpayment
 * tolerance, overpayment), when they expire by default, and the customer's page (its name, where it may
 * return). Owners change it; others read it.
 */
export function policyPage(
  res: Response,
  f: PortalFrame,
  input: {
    app: App;
    role: MemberRole;
    policy: PaymentPolicyView | null;
    asked?: PolicyAsked;
    /** The field the service refused, or null. */
    invalid?: string | null;
  },
  status = 200,
): void {
  const { app, role, policy } = input;
  const base = `/portal/apps/${app.id}/payment-policy`;
  const invalid = input.invalid ?? null;
  let body: Html | string = '';
  if (policy && role === 'owner') {
    const a = input.asked ?? {};
    const flag = a.flag_overpayment ?? String(policy.flag_overpayment);
    const option = (value: string, text: string) =>
      html`<option value="${value}"${flag === value ? html` selected` : ''}>${text}</option>`;
    body = html`<form method="post" action="${base}" aria-labelledby="policy-heading" id="policy-form">${hiddenFields({ csrf: f.csrf })}
${field('underpayment_tolerance_percent', 'Underpayment tolerance (%)', 'A payment this many percent short of the amount due still makes the request paid: 0 to 50, two decimals.', a.underpayment_tolerance_percent ?? policy.underpayment_tolerance_percent, invalid, { extra: html` inputmode="decimal"` })}
<label for="policy-flag-overpayment">Overpayments</label><select id="policy-flag-overpayment" name="flag_overpayment" aria-describedby="policy-flag-overpayment-hint">${option('true', 'Accept and mark the request paid_over')}${option('false', 'Accept and mark the request paid')}</select>
<p class="muted" id="policy-flag-overpayment-hint">An overpayment is always accepted; refund the difference if you wish.</p>
${field('default_expires_in', 'Default expiry (seconds)', 'How long a request created without expires_in stays open: 60 to 86400 seconds.', a.default_expires_in ?? String(policy.default_expires_in), invalid, { extra: html` inputmode="numeric"` })}
${field('display_name', 'Name on the payment page', 'What your customers see on the payment page; empty for none.', a.display_name ?? policy.display_name ?? '', invalid, { extra: html` maxlength="100"` })}
${field('return_origins', 'Return origins', 'The https origins (https://shop.example) a request’s return_url may point to, one a line, at most 10.', a.return_origins ?? policy.return_origins.join('\n'), invalid, { multiline: true })}
<p class="muted">A request keeps the policy it was created under; the change applies to the requests created from now on.</p>
<button type="submit" id="save-policy">Save the payment policy</button></form>`;
  } else if (policy) {
    const row = (term: string, value: string | Html) => html`<dt>${term}</dt><dd>${value}</dd>`;
    body = html`<dl id="policy-values">${row('Underpayment tolerance', `${policy.underpayment_tolerance_percent} %`)}${row('Overpayments', policy.flag_overpayment ? 'marked paid_over' : 'marked paid')}${row('Default expiry', `${policy.default_expires_in} seconds`)}${row('Name on the payment page', policy.display_name ?? 'none')}${row('Return origins', policy.return_origins.length === 0 ? 'none' : html`${policy.return_origins.map((o, i) => html`${i > 0 ? ', ' : ''}<code>${o}</code>`)}`)}</dl>
<p class="muted" id="read-only">Only an owner of the app changes its payment policy.</p>`;
  }
  frame(
    res,
    status,
    `Payment policy · ${app.name}`,
    f,
    html`${appHeading(app, role)}${appNav(app, 'policy')}<h2 id="policy-heading">Payment policy</h2>${body}`,
  );
}
