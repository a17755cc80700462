import { outboundUrlProblem, type OutboundPolicy } from '@attest/common';

/**
 * Webhook endpoints go through the shared outbound guard (packages/common/src/outbound), as back-channel
 * logout does: checked when registered, and resolved, checked and pinned on every delivery.
 */
export { isPrivateAddress, resolveTarget, TargetRefused, type Lookup, type ResolvedTarget } from '@attest/common';

/** Why a URL cannot be a webhook endpoint, as a sentence naming `url`; null when it can. */
export function endpointUrlProblem(raw: string, policy: OutboundPolicy): string | null {
  return outboundUrlProblem(raw, 'url', policy);
}
