/**
 * Receiving addresses (issue 40, item 1): the addresses each app receives payments at, per chain, one app per
 * (chain, address); added by an operator or proven by a signed challenge (EIP-191, EIP-1271); the check the
 * payment paths make (`isReceivingAddress`, `ownerOf`, `requireReceivingAddress`); the app API, the admin API.
 * Needs: the kernel.
 */
export {
  CHALLENGE_TTL_MS,
  challengeMessage,
  MAX_OPEN_CHALLENGES,
  notReceivingAddress,
  ReceivingAddressService,
} from './receiving-address-service';
export {
  receivingAddressStore,
  type AddressChallenge,
  type ReceivingAddress,
  type ReceivingAddressProof,
  type ReceivingAddressStore,
} from './receiving-address-store';
export { signatureVerifier, type SignatureVerifier } from './signature-verifier';
export { receivingAddressesRoute, type ReceivingAddressesRouteDeps } from './receiving-addresses-route';
export { receivingAddressesAdminRoutes, type ReceivingAddressesAdminDeps } from './receiving-addresses-admin-routes';
export { receivingAddressComponents } from './receiving-address-fields';
