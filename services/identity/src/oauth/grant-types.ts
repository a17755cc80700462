import type { BoundResource } from '../resources';

/**
 * What a person approved for an app, as the tokens are made from it: by the code exchange (a code's record)
 * and by the device flow (issue 41, RFC 8628: the device/ feature keeps it until the device polls).
 */
export interface ApprovedGrant {
  clientId: string;
  userId: string;
  sub: string;
  /** The OpenID Connect scopes; openid among them gives an id_token. */
  scopes: string[];
  nonce?: string;
  authTime: number;
  amr?: string[];
  /** The person's verification level as acr, when the grant was approved. */
  acr?: string;
  /** The sign-in claims the claims parameter asked /userinfo for. */
  userinfoClaims?: string[];
  /** The session's sid for this app. */
  sid?: string;
  /** The app's id_token algorithm, when not RS256. */
  idTokenAlg?: 'PS256' | 'ES256';
  /** RFC 8707: the resource its access token is for, and the scopes granted for it. */
  resource?: BoundResource;
  /** offline_access was asked for: the tokens include a refresh token. */
  offlineAccess?: true;
}

/** A code exchanged, as a refresh token family begins from it (issue 41). */
export interface ExchangedGrant {
  clientId: string;
  userId: string;
  sub: string;
  sid?: string;
  scopes: string[];
  resource?: BoundResource;
  jkt?: string;
  acr: string;
  amr?: string[];
  authTime: number;
  /** The access token issued with it. */
  accessJti: string;
  offlineAccess: boolean;
}

/** Gives the refresh token of an exchanged grant, when it is to have one (the refresh feature, bound in services.ts). */
export type RefreshIssuer = (grant: ExchangedGrant) => Promise<string | undefined>;

export interface TokenResponse {
  access_token: string;
  /** DPoP when the token is bound to the proof's key (RFC 9449 §5). */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope: string;
  /** When openid was granted (always for a code; the device flow may be without it). */
  id_token?: string;
  /** offline_access (issue 41): rotated on every use. */
  refresh_token?: string;
}
