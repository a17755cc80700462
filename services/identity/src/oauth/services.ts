import type { ClientKeys } from './client-keys';
import type { DpopProofs } from './dpop';
import type { Grants } from './grants';
import type { InteractionLimit } from './interaction-limit';
import type { InteractionStore } from './interactions';
import type { PushedRequests } from './pushed-requests';

/** The OAuth feature's services, built once in the composition root; routes take Pick<>s of them. */
export interface OAuthServices {
  grants: Grants;
  /** Apps' public keys (jwks or jwks_uri): private_key_jwt and signed request objects. */
  clientKeys: ClientKeys;
  /** Pushed authorization requests (RFC 9126), single-use, in the cache. */
  pushedRequests: PushedRequests;
  /** DPoP (RFC 9449) proofs at /token and /userinfo (and for /par): verification, nonces, replay. */
  dpop: DpopProofs;
  interactions: InteractionStore;
  /** New sign-in interactions per client address (INTERACTIONS_PER_ADDRESS). */
  interactionLimit: InteractionLimit;
}
