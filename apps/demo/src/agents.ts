import { randomInt } from 'node:crypto';
import type { Logger } from '@attest/common';

type OpenIdClient = typeof import('openid-client');
type Configuration = import('openid-client').Configuration;

/** The demo's resource (RFC 8707): an API of trips the demo's agent acts on for the person. */
export const TRIPS_SCOPES = ['trips:read', 'trips:book'] as const;
/** What "Exchange" may ask for: narrowed, all the person gave, or wider (which Attest refuses). */
export const EXCHANGE_SCOPES = ['trips:read', 'trips:read trips:book', 'trips:read payments:make'] as const;
export type ExchangeScope = (typeof EXCHANGE_SCOPES)[number];

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

/** A delegated token as the demo shows it: its claims, and what Attest's /introspect says of it. */
export interface Delegated {
  issuedTokenType: string;
  expiresIn: number;
  claims: { sub?: string; act?: unknown; aud?: unknown; scope?: string; acr?: string; exp?: number };
  introspection: { active: boolean; act?: unknown };
}

export interface PaymentDetail {
  type: 'payment';
  amount: string;
  currency: string;
  payee: string;
  reference: string;
}

/** One CIBA request of the demo for the person, and where it stands (the poll runs in the background). */
export interface PaymentApproval {
  bindingMessage: string;
  detail: PaymentDetail;
  state: 'pending' | 'approved' | 'denied' | 'expired' | 'failed';
  /** What the tokens carried once approved. */
  approved?: { authorizationDetails: unknown; acr?: string; approvedAt?: number };
  error?: string;
  abort: AbortController;
}

/** The agents part of a signed-in person's demo session (in memory, as the rest of it). */
export interface AgentsState {
  /** The person's access token for the trips resource: what they gave the demo's agent at /authorize. */
  granted?: { accessToken: string; scope: string; expiresAt: number };
  delegated?: Delegated;
  error?: string;
  payment?: PaymentApproval;
}

/**
 * An OAuth error answer as one line: openid-client's ResponseBodyError (error, error_description), or its
 * WWWAuthenticateChallengeError (the same in the challenge's parameters, e.g. a 401 of /introspect);
 * anything else by its message.
 */
export const oauthError = (err: unknown): { code?: string; line: string } => {
  const e = err as { error?: unknown; error_description?: unknown; message?: string; cause?: unknown };
  const challenge = Array.isArray(e.cause)
    ? (e.cause[0] as { parameters?: Record<string, string> } | undefined)?.parameters
    : undefined;
  const code = typeof e.error === 'string' ? e.error : challenge?.error;
  const description = typeof e.error_description === 'string' ? e.error_description : challenge?.error_description;
  return code ? { code, line: `${code}: ${description ?? ''}` } : { line: e.message ?? String(err) };
};

const payloadOf = (jwt: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

/**
 * The demo's agent (issue 42): it exchanges the token the person gave it for the trips resource for a
 * short-lived token acting for them (RFC 8693, `act`), and asks them to approve one payment (CIBA with an
 * RFC 9396 `payment` detail), polling /token in the background until they decide on their account page.
 */
export function demoAgent(oidc: OpenIdClient, logger: Logger) {
  /**
   * RFC 8693: the person's token (issued to the demo, so it needs no operator leave) for one acting for them,
   * with the scope chosen; the new token's claims, and /introspect's answer as the demo app.
   */
  async function exchange(config: Configuration, state: AgentsState, scope: ExchangeScope): Promise<void> {
    state.delegated = undefined;
    state.error = undefined;
    if (!state.granted || state.granted.expiresAt <= Date.now()) {
      state.granted = undefined;
      state.error = 'First let the demo’s agent act for you: your token for the trips API is missing or expired.';
      return;
    }
    try {
      const issued = await oidc.genericGrantRequest(config, TOKEN_EXCHANGE, {
        subject_token: state.granted.accessToken,
        subject_token_type: ACCESS_TOKEN,
        scope,
      });
      // straight from /token over the back channel: its payload is read, not verified again
      const payload = payloadOf(issued.access_token);
      const introspection = await oidc.tokenIntrospection(config, issued.access_token);
      state.delegated = {
        issuedTokenType: String(issued.issued_token_type ?? ''),
        expiresIn: issued.expires_in ?? 0,
        claims: {
          sub: payload.sub as string | undefined,
          act: payload.act,
          aud: payload.aud,
          scope: payload.scope as string | undefined,
          acr: payload.acr as string | undefined,
          exp: payload.exp as number | undefined,
        },
        introspection: { active: introspection.active, act: introspection.act },
      };
    } catch (err) {
      state.error = `The exchange was refused: ${oauthError(err).line}`;
    }
  }

  /** CIBA: asks the person (their pairwise sub for the demo) to approve one payment; the poll runs on its own. */
  async function askPayment(config: Configuration, state: AgentsState, sub: string): Promise<void> {
    state.payment?.abort.abort();
    state.payment = undefined;
    state.error = undefined;
    const detail: PaymentDetail = {
      type: 'payment',
      amount: '42.50',
      currency: 'EUR',
      payee: 'Demo Travel',
      reference: `TRIP-${randomInt(1000, 10000)}`,
    };
    const bindingMessage = `DEMO-${randomInt(1000, 10000)}`;
    let asked;
    try {
      asked = await oidc.initiateBackchannelAuthentication(config, {
        scope: 'openid',
        login_hint: sub,
        binding_message: bindingMessage,
        authorization_details: JSON.stringify([detail]),
      });
    } catch (err) {
      state.error = `Attest refused the request: ${oauthError(err).line}`;
      return;
    }
    const payment: PaymentApproval = { bindingMessage, detail, state: 'pending', abort: new AbortController() };
    state.payment = payment;
    // openid-client polls every `interval` seconds (slower after slow_down) until the person decides
    oidc.pollBackchannelAuthenticationGrant(config, asked, undefined, { signal: payment.abort.signal }).then(
      (tokens) => {
        const claims = tokens.claims();
        payment.state = 'approved';
        payment.approved = {
          authorizationDetails: tokens.authorization_details,
          acr: typeof claims?.acr === 'string' ? claims.acr : undefined,
          approvedAt: claims?.auth_time,
        };
      },
      (err: unknown) => {
        if (payment.abort.signal.aborted) return;
        const { code, line } = oauthError(err);
        payment.state = code === 'access_denied' ? 'denied' : code === 'expired_token' ? 'expired' : 'failed';
        payment.error = line;
        if (payment.state === 'failed') logger.warn('demo: polling a payment approval failed', { error: line });
      },
    );
  }

  /** Stops the state's background poll (sign-out, a new request, the demo stopping). */
  const forget = (state: AgentsState | undefined) => state?.payment?.abort.abort();

  return { exchange, askPayment, forget };
}
