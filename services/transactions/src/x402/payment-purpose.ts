import { createHash } from 'node:crypto';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { extractPaymentIdentifier } from '@x402/extensions/payment-identifier';
import { HUMAN_EXTENSION } from './human-proof';
import { REASONS, type Reason } from './reasons';
import type { ClaimPurpose, SettlementRow } from './settlement-store';
import type { Authorization } from './x402-chain';

/**
 * What one payment pays for, kept with its claim (024_x402_claim_purpose.sql): the resource's URL, as the
 * payload names it (x402 v2 carries it in PaymentPayload.resource, not in the requirements), and a hash of the
 * seller's requirements. An authorization moves funds once, so it pays for one thing: a settle of a claimed
 * authorization answers the claim's outcome only for the same resource and requirements (a retry).
 *
 * The hash is over the requirements the seller sent (paymentRequirements, not the buyer's `accepted`): scheme,
 * network, asset and payTo (lower case), amount, and extra (which carries payment_request_id, the token's
 * EIP-712 domain, the attest-human requirement, and whatever the seller adds), as canonical JSON.
 * maxTimeoutSeconds is left out: it is how long the seller waits, not what is paid for.
 */
export function purposeOf(payload: PaymentPayload, requirements: PaymentRequirements): ClaimPurpose {
  const asked = {
    scheme: requirements.scheme,
    network: requirements.network,
    asset: requirements.asset.toLowerCase(),
    payTo: requirements.payTo.toLowerCase(),
    amount: requirements.amount,
    extra: requirements.extra ?? {},
  };
  return {
    resource: resourceOf(payload),
    requirementsHash: createHash('sha256').update(canonicalJson(asked)).digest('hex'),
  };
}

/**
 * Why a settle for `purpose` (of `appId`, for `requirements`) may not answer the outcome of `row`'s claim: its
 * reason and message, or null when it is a retry of that payment (the same app, resource and requirements).
 * The caller has checked that the presented authorization is the payer's and the claim's (claimedAuthorizationMismatch).
 */
export function claimRefusal(
  appId: string,
  row: SettlementRow,
  purpose: ClaimPurpose,
  requirements: PaymentRequirements,
): { reason: Reason; message: string } | null {
  if (row.appId !== appId)
    return { reason: REASONS.otherApp, message: 'This authorization is settled for another app.' };
  // its outcome answers a retry of the same payment, never requirements the authorization does not meet
  if (requirements.payTo.toLowerCase() !== row.payTo)
    return {
      reason: REASONS.recipientMismatch,
      message: 'This authorization pays another address than paymentRequirements.payTo.',
    };
  if (BigInt(requirements.amount) > BigInt(row.value))
    return {
      reason: REASONS.value,
      message: `This authorization carries ${row.value}, less than the ${requirements.amount} required.`,
    };
  // requirements that ask for the human behind the agent are never met by an authorization claimed without
  if (requirements.extra?.[HUMAN_EXTENSION] !== undefined && !row.human)
    return {
      reason: REASONS.humanMissing,
      message:
        'This authorization is settled (or being settled) without the proof of the human behind the agent these requirements ask for.',
    };
  // One payment pays for one thing: the same authorization for another resource, or other requirements, is not
  // a retry. Refused as verify refuses a nonce used on chain or claimed, invalid_exact_evm_nonce_already_used:
  // the standard reason for "this authorization cannot pay again" (@x402/evm's facilitator answers it for a used
  // nonce), which sellers and clients already handle by signing a new one; the message names the cause.
  const other = otherPurpose(row, purpose, Math.floor(Date.now() / 1000));
  return other ? { reason: REASONS.nonceUsed, message: other } : null;
}

/**
 * Why a settle for `purpose` may not answer the outcome of `row`'s claim, or null when it is a retry of that
 * payment. A row claimed before the purpose was kept (024; no hash) answers as before (payTo, amount and the
 * human proof, checked by the caller) while the authorization may still be settled (before the validBefore the
 * claim stored): a retry comes within the seller's maxTimeoutSeconds. Once it has expired, such a row's success
 * answers no new settle: nothing tells a late retry from the authorization presented for another resource. A
 * row that stored no validBefore (claimed before 025, as every row before 024 was) is taken as expired: the
 * request's validBefore is not the claim's (the payer may sign the same nonce again with a later one). Its
 * failure (it bought nothing) is still answered, and one not finished yet is still finished as before.
 */
function otherPurpose(
  row: Pick<SettlementRow, 'resource' | 'requirementsHash' | 'outcome' | 'validBefore'>,
  purpose: ClaimPurpose,
  nowSeconds: number,
): string | null {
  if (row.requirementsHash === null)
    return row.outcome?.success && (row.validBefore === null || BigInt(row.validBefore) <= BigInt(nowSeconds))
      ? 'This authorization is already used (settled before Attest kept what a payment is for, and now expired); sign a new one.'
      : null;
  if (row.resource !== purpose.resource)
    return `This authorization is already used: it pays for another resource (${row.resource ?? 'none named'}), not ${purpose.resource ?? 'one named by no resource'}; sign a new one.`;
  if (row.requirementsHash !== purpose.requirementsHash)
    return 'This authorization is already used: it pays for other payment requirements of this resource; sign a new one.';
  return null;
}

/**
 * Why the authorization presented for `row`'s claim (its signature checked by the caller) is not the one the
 * claim holds, or null when it is: the same `to` (the claim's payTo) and value, and, when the claim stored them
 * (025), validAfter and validBefore. The key (from, nonce) found the row. A payer may sign the same nonce twice
 * with other fields: only one can move funds, and the claim's is the one this settle answers for.
 */
export function claimedAuthorizationMismatch(
  row: Pick<SettlementRow, 'payTo' | 'value' | 'validAfter' | 'validBefore'>,
  a: Authorization,
): string | null {
  const differ =
    a.to.toLowerCase() !== row.payTo ||
    BigInt(a.value) !== BigInt(row.value) ||
    (row.validAfter !== null && BigInt(a.validAfter) !== BigInt(row.validAfter)) ||
    (row.validBefore !== null && BigInt(a.validBefore) !== BigInt(row.validBefore));
  return differ
    ? 'This authorization’s nonce is claimed by another authorization of the payer (its to, value or validity differ); sign a new one.'
    : null;
}

/**
 * Whether `row` claims its authorization for another payment than `payload` for `requirements` (another resource
 * or other requirements). verify refuses such a claim even when its settle stopped before sending anything:
 * only a retry of its own payment may take it over. False for a claim from before 024 (it names no payment).
 */
export function claimedForOther(
  row: Pick<SettlementRow, 'resource' | 'requirementsHash'>,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): boolean {
  if (row.requirementsHash === null) return false;
  const purpose = purposeOf(payload, requirements);
  return row.resource !== purpose.resource || row.requirementsHash !== purpose.requirementsHash;
}

/** The resource's URL the payload names (PaymentPayload.resource.url), or null. */
function resourceOf(payload: PaymentPayload): string | null {
  const url = payload.resource?.url;
  return typeof url === 'string' && url.length > 0 ? url : null;
}

/** JSON with every object's keys sorted: equal values, equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** payment_request_id in the requirements' extra: the payment request the payment pays. */
export function paymentRequestIdOf(requirements: PaymentRequirements): string | undefined {
  const id = requirements.extra?.payment_request_id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * The recorded transaction's reference: x402:id: and the payment-identifier extension's id when the buyer sent
 * one (prefixed, so a buyer never picks one of the seller's own references), else x402:<nonce> followed by the
 * resource's URL (unique per authorization; at most 200 characters).
 */
export const referenceOf = (payload: PaymentPayload, nonce: string): string =>
  referenceFor(paymentIdOf(payload), resourceOf(payload), nonce);

/** referenceOf from a payment-identifier's id and a resource's URL (a claim keeps both, 024). */
export function referenceFor(paymentId: string | null, resource: string | null, nonce: string): string {
  if (paymentId) return `x402:id:${paymentId}`;
  return (resource ? `x402:${nonce} ${resource}` : `x402:${nonce}`).slice(0, 200);
}

/** The payment-identifier extension's id the buyer sent (a valid one), or null. */
export const paymentIdOf = (payload: PaymentPayload): string | null => extractPaymentIdentifier(payload, true);
