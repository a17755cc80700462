import { hmacHex, randomHex } from './crypto';

export const newAppId = () => `app_${randomHex(16)}`;
export const newClientSecret = () => `sk_${randomHex(24)}`;
export const newUserId = () => `usr_${randomHex(16)}`;
export const newKid = () => `jwk_${randomHex(16)}`;
export const newAuthorizationCode = () => randomHex(32);
export const newOpaqueId = () => randomHex(32);

export const APP_ID = /^app_[0-9a-f]{32}$/;

/** The longest client_id URL accepted (a Client ID Metadata Document's address). */
export const CLIENT_ID_URL_MAX_LENGTH = 2000;

/**
 * A client_id that is the URL of a Client ID Metadata Document (issue 41): https (plain http only where
 * the outbound guard allows it, judged when it is fetched), no spaces, bounded. Whether it is a usable
 * document is for the registration feature to find out.
 */
export const isClientIdUrl = (id: string): boolean =>
  id.length <= CLIENT_ID_URL_MAX_LENGTH && /^https?:\/\/[^\s]+$/.test(id);

/** An app's id (app_…), or a metadata document's URL: what AppDirectory.find may know. */
export const isClientId = (id: string): boolean => APP_ID.test(id) || isClientIdUrl(id);

/** Client secrets have 192 random bits, so a keyed hash (not a slow KDF) is the right store. */
export const hashClientSecret = (serverSecret: string, clientSecret: string) =>
  hmacHex(serverSecret, `client-secret:${clientSecret}`);

/** Pairwise subject: stable for one person in one app, unlinkable across apps without the server secret. */
export const pairwiseSubject = (serverSecret: string, appId: string, userId: string) =>
  `0x${hmacHex(serverSecret, `pairwise:${appId}:${userId}`)}`;

/**
 * The `sid` an app sees for a session (id_token, logout_token): per app like the subject, so two apps
 * cannot link their users through a shared session id.
 */
export const pairwiseSid = (serverSecret: string, appId: string, sessionId: string) =>
  hmacHex(serverSecret, `sid:${appId}:${sessionId}`).slice(0, 32);
