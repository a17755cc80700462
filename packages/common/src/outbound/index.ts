export { isPrivateAddress } from './addresses';
export {
  outboundUrlProblem,
  resolveTarget,
  TargetRefused,
  type Lookup,
  type OutboundPolicy,
  type ResolvedTarget,
} from './outbound-guard';
export { fetchPublicJwks, type PublicJwk } from './fetch-jwks';
export { getFromTarget, type GetResult } from './get-from-target';
export { postToTarget, type PostResult } from './post-to-target';
