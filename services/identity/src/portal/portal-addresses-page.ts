import type { Response } from 'express';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import { html } from '../kernel/html';
import { hiddenFields } from '../kernel/pages';
import { appHeading, appNav, copyHint, frame, when, type PortalFrame } from './portal-pages';
import type { AddressChallengeView, ReceivingAddressView } from './transactions-admin';

const PROOF_TEXT: Record<ReceivingAddressView['proof'], string> = {
  operator: 'added by an operator',
  eip191: 'proven by its signature',
  eip1271: 'proven by its contract (EIP-1271)',
};

/**
 * /portal/apps/{id}/addresses: the addresses the app receives payments at (issue 40, item 1). An owner adds one
 * in two steps (a challenge for the address to sign, then the signature) and removes one; others read.
 */
export function addressesPage(
  res: Response,
  f: PortalFrame,
  input: {
    app: App;
    role: MemberRole;
    addresses: ReceivingAddressView[] | null;
    challenge?: AddressChallengeView;
    /** What the owner typed, shown again after a refusal. */
    asked?: { chain?: string; address?: string };
  },
  status = 200,
): void {
  const { app, role } = input;
  const isOwner = role === 'owner';
  const csrf = hiddenFields({ csrf: f.csrf });
  const base = `/portal/apps/${app.id}/addresses`;
  const addresses = input.addresses ?? [];
  const list =
    input.addresses === null
      ? ''
      : addresses.length === 0
        ? html`<div class="empty" id="no-addresses"><p><strong>This app has no receiving address.</strong></p><p>Its backend can record payments and create payment requests only to its own addresses.</p></div>`
        : html`<ul class="items" aria-labelledby="addresses-heading">${addresses.map(
            (
              a,
            ) => html`<li data-address="${a.address}"><span><code>${a.address}</code> on <strong>${a.chain}</strong><br>
<span class="muted">${PROOF_TEXT[a.proof]} · since ${when(a.created_at)}</span></span>
${isOwner ? html`<form method="post" action="${base}/remove">${csrf}${hiddenFields({ chain: a.chain, address: a.address })}<button type="submit" class="danger" aria-label="Remove ${a.address} on ${a.chain}">Remove</button></form>` : ''}</li>`,
          )}</ul>`;
  const c = input.challenge;
  const sign = c
    ? html`<h2 id="sign-heading">Sign with ${c.address}</h2>
<p>Sign this message with the address’s wallet (<code>personal_sign</code>; a smart-contract wallet signs it as EIP-1271) before ${when(c.expires_at)}, and paste the signature below. The message can be used once.</p>
<label for="challenge-message">Message</label><textarea id="challenge-message" readonly class="copy" rows="9" spellcheck="false" aria-describedby="copy-hint">${c.message}</textarea>${copyHint}
<form method="post" action="${base}" aria-labelledby="sign-heading">${csrf}${hiddenFields({ challenge_id: c.challenge_id })}
<label for="address-signature">Signature <span class="muted">(0x…)</span></label><textarea id="address-signature" name="signature" required rows="3" spellcheck="false" autocomplete="off"></textarea>
<button type="submit" id="prove-address">Add the address</button></form>`
    : '';
  const ask = isOwner
    ? html`<h2 id="new-address-heading">Add a receiving address</h2>
<p class="muted">You prove the address is yours by signing a message with it. An operator can also add an address your wallet cannot sign for.</p>
<form method="post" action="${base}/challenge" aria-labelledby="new-address-heading">${csrf}
<label for="address-chain">Chain</label><input id="address-chain" name="chain" required maxlength="50" value="${input.asked?.chain ?? 'worldchain'}">
<label for="address-value">Address</label><input id="address-value" name="address" required maxlength="42" placeholder="0x…" spellcheck="false" value="${input.asked?.address ?? ''}">
<button type="submit" id="ask-challenge">Get the message to sign</button></form>`
    : html`<p class="muted" id="read-only">Only an owner of the app adds or removes its receiving addresses.</p>`;
  frame(
    res,
    status,
    `Receiving addresses · ${app.name}`,
    f,
    html`${appHeading(app, role)}${appNav(app, 'addresses')}<h2 id="addresses-heading">Receiving addresses</h2>${list}${sign}${ask}`,
  );
}
