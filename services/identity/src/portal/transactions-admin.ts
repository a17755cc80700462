import { AppError } from '@attest/common';

/** An API key as the transactions admin API shows it (never the key itself, but once at creation). */
export interface ApiKeyView {
  key_id: string;
  app_id: string;
  name: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A webhook endpoint as the transactions admin API shows it (never its secret, but once). */
export interface WebhookView {
  webhook_id: string;
  app_id: string;
  url: string;
  description: string | null;
  enabled_events: string[];
  status: 'enabled' | 'failing' | 'disabled';
  created_at: string;
  previous_secret_expires_at: string | null;
  failing_since: string | null;
  consecutive_failures: number;
  throttled_until: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
}

/** A delivery of an event to an endpoint, with every attempt: its status code or error. */
export interface DeliveryView {
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
  log: {
    attempt: number;
    started_at: string;
    status_code: number | null;
    error: string | null;
    latency_ms: number;
    /** The body sent (the event's), its first 4096 characters. */
    request_body: string;
    request_body_truncated: boolean;
    /** The answer's first 4096 bytes as text; null: no answer. */
    response_body: string | null;
    response_body_truncated: boolean;
  }[];
}

/** A payment recorded for a payment request. */
export interface RequestPaymentView {
  transaction_id: string;
  reference: string;
  transaction_hash: string | null;
  from: string;
  status: 'pending' | 'mined' | 'failed';
  reason: string | null;
  token_amount: string;
  amount_received: string | null;
  block_number: string | null;
  block_time: string | null;
  confirmations: number | null;
  late: boolean;
  recorded_at: string;
}

/** A payment request, as GET /api/v2/client/payment-requests/{id} answers it. */
export interface PaymentRequestView {
  id: string;
  reference: string;
  status: string;
  reason: string | null;
  reason_detail: string | null;
  chain: string;
  token: string;
  to: string;
  amount_due: string;
  amount_paid: string;
  amount_remaining: string;
  amount_over: string;
  /** What the app's recorded refunds add up to (issue 44); absent from a service that predates refunds. */
  amount_refunded?: string;
  price: { amount: string; currency: string; observed_at: string; source: string } | null;
  expires_at: string;
  created_at: string;
  updated_at: string;
  payments: RequestPaymentView[];
}

/** A transaction (a payment or a sendTransaction) of an app. */
export interface TransactionView {
  transaction_id: string;
  type: 'pay' | 'sendTransaction';
  reference: string;
  transaction_hash: string | null;
  transaction_status: 'pending' | 'mined' | 'failed';
  from: string;
  to: string;
  chain: string;
  token: string;
  token_amount: string;
  timestamp: string;
  app_id: string;
  updated_at?: string;
  status_reason?: string | null;
  history?: {
    from_status: string | null;
    to_status: string;
    source: string;
    reason: string | null;
    reason_detail: string | null;
    changed_at: string;
  }[];
}

/** An event of the app, with the payload its endpoints are sent. */
export interface EventView {
  event_id: string;
  type: string;
  created_at: string;
  payload: { version: string; type: string; timestamp: string; data: Record<string, unknown> };
}

export interface WebhookFields {
  url?: string;
  description?: string | null;
  enabled_events?: string[];
}

const query = (q: Record<string, string | number | undefined>) => {
  const entries = Object.entries(q).filter((e): e is [string, string | number] => e[1] !== undefined && e[1] !== '');
  return entries.length
    ? `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()}`
    : '';
};
const seg = encodeURIComponent;

/**
 * The transactions service's admin API, as the portal uses it (API keys, webhooks, payments and events
 * live there): the same operations `pnpm manage` and the app API call, with TRANSACTIONS_ADMIN_URL and
 * TRANSACTIONS_ADMIN_TOKEN.
 */
export class TransactionsAdmin {
  constructor(
    private readonly url: string,
    private readonly token: string | null,
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  get configured(): boolean {
    return this.token !== null;
  }

  private async call<T>(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    route: string,
    body?: unknown,
  ): Promise<T> {
    if (!this.token)
      throw new AppError(
        'transactions_unavailable',
        503,
        'API keys, webhooks and payments are not available here: the operator has not set TRANSACTIONS_ADMIN_TOKEN.',
      );
    let response: Response;
    try {
      response = await this.fetchFn(`${this.url}/admin${route}`, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10000),
      });
    } catch {
      throw new AppError(
        'transactions_unavailable',
        503,
        'The transactions service cannot be reached (TRANSACTIONS_ADMIN_URL). Try again in a moment.',
      );
    }
    const parsed = (await response.json().catch(() => ({}))) as T & {
      detail?: string;
      code?: string;
      attribute?: string | null;
    };
    if (!response.ok)
      throw new AppError(
        parsed.code ?? 'transactions_error',
        response.status >= 500 ? 503 : response.status,
        parsed.detail ?? `The transactions service answered ${response.status}.`,
        parsed.attribute ?? null,
      );
    return parsed;
  }

  listKeys(appId: string): Promise<ApiKeyView[]> {
    return this.call('GET', `/apps/${encodeURIComponent(appId)}/api-keys`);
  }

  createKey(appId: string, name: string | null): Promise<ApiKeyView & { api_key: string }> {
    return this.call('POST', `/apps/${encodeURIComponent(appId)}/api-keys`, { name });
  }

  revokeKey(keyId: string): Promise<ApiKeyView> {
    return this.call('POST', `/api-keys/${encodeURIComponent(keyId)}/revoke`, {});
  }

  setAppDisabled(appId: string, disabled: boolean): Promise<unknown> {
    return this.call('POST', `/apps/${encodeURIComponent(appId)}/${disabled ? 'disable' : 'enable'}`, {});
  }

  listWebhooks(appId: string): Promise<WebhookView[]> {
    return this.call('GET', `/apps/${seg(appId)}/webhooks`);
  }

  addWebhook(appId: string, fields: WebhookFields & { url: string }): Promise<WebhookView & { secret: string }> {
    return this.call('POST', `/apps/${seg(appId)}/webhooks`, fields);
  }

  updateWebhook(id: string, fields: WebhookFields): Promise<WebhookView> {
    return this.call('PATCH', `/webhooks/${seg(id)}`, fields);
  }

  removeWebhook(id: string): Promise<WebhookView> {
    return this.call('DELETE', `/webhooks/${seg(id)}`);
  }

  setWebhookEnabled(id: string, enabled: boolean): Promise<WebhookView> {
    return this.call('POST', `/webhooks/${seg(id)}/${enabled ? 'enable' : 'disable'}`, {});
  }

  rotateWebhookSecret(id: string): Promise<WebhookView & { secret: string }> {
    return this.call('POST', `/webhooks/${seg(id)}/rotate-secret`, {});
  }

  sendTestEvent(id: string): Promise<{ webhook_id: string; event_id: string; type: string }> {
    return this.call('POST', `/webhooks/${seg(id)}/test`, {});
  }

  recoverWebhook(id: string, since: string): Promise<{ webhook_id: string; since: string; deliveries: number }> {
    return this.call('POST', `/webhooks/${seg(id)}/recover`, { since });
  }

  deliveries(id: string, limit: number): Promise<DeliveryView[]> {
    return this.call('GET', `/webhooks/${seg(id)}/deliveries${query({ limit })}`);
  }

  redeliver(deliveryId: string): Promise<Omit<DeliveryView, 'log'>> {
    return this.call('POST', `/webhook-deliveries/${seg(deliveryId)}/redeliver`, {});
  }

  paymentRequests(
    appId: string,
    q: { reference?: string; status?: string; cursor?: string; limit?: number },
  ): Promise<{ data: PaymentRequestView[]; next_cursor: string | null }> {
    return this.call('GET', `/apps/${seg(appId)}/payment-requests${query(q)}`);
  }

  paymentRequest(appId: string, id: string): Promise<PaymentRequestView> {
    return this.call('GET', `/apps/${seg(appId)}/payment-requests/${seg(id)}`);
  }

  transactions(
    appId: string,
    q: { reference?: string; status?: string; cursor?: string; limit?: number },
  ): Promise<{ transactions: TransactionView[]; next_cursor: string | null }> {
    return this.call('GET', `/transactions${query({ app_id: appId, ...q })}`);
  }

  transaction(id: string): Promise<TransactionView> {
    return this.call('GET', `/transactions/${seg(id)}`);
  }

  events(
    appId: string,
    q: { after?: string; type?: string; limit?: number },
  ): Promise<{ data: EventView[]; has_more: boolean; next_after: string | null }> {
    return this.call('GET', `/apps/${seg(appId)}/events${query(q)}`);
  }

  receivingAddresses(appId: string): Promise<ReceivingAddressView[]> {
    return this.call('GET', `/apps/${seg(appId)}/receiving-addresses`);
  }

  /** A challenge for the owner to sign with the address (the portal never adds one without its signature). */
  addressChallenge(appId: string, chain: string, address: string): Promise<AddressChallengeView> {
    return this.call('POST', `/apps/${seg(appId)}/receiving-addresses/challenges`, { chain, address });
  }

  proveAddress(appId: string, challengeId: string, signature: string): Promise<ReceivingAddressView> {
    return this.call('POST', `/apps/${seg(appId)}/receiving-addresses/proofs`, {
      challenge_id: challengeId,
      signature,
    });
  }

  removeReceivingAddress(appId: string, chain: string, address: string): Promise<ReceivingAddressView> {
    return this.call('DELETE', `/apps/${seg(appId)}/receiving-addresses/${seg(chain)}/${seg(address)}`);
  }

  /** The app's payment policy (the defaults when never set). */
  paymentPolicy(appId: string): Promise<PaymentPolicyView> {
    return this.call('GET', `/apps/${seg(appId)}/payment-policy`);
  }

  /** Sets the fields given (the service checks them: 400 naming the field); the policy now. */
  setPaymentPolicy(appId: string, fields: PaymentPolicyFields): Promise<PaymentPolicyView> {
    return this.call('PUT', `/apps/${seg(appId)}/payment-policy`, fields);
  }
}

/** What PUT …/payment-policy takes: strings as the form sent them, the service converts and checks them. */
export interface PaymentPolicyFields {
  underpayment_tolerance_percent?: string;
  flag_overpayment?: boolean;
  default_expires_in?: string;
  display_name?: string | null;
  return_origins?: string[];
}

/** An app's payment policy (issue 44): how its payment requests are settled, expire and return. */
export interface PaymentPolicyView {
  app_id: string;
  underpayment_tolerance_percent: string;
  flag_overpayment: boolean;
  default_expires_in: number;
  display_name: string | null;
  return_origins: string[];
}

/** An address an app receives payments at, and how it was added (issue 40, item 1). */
export interface ReceivingAddressView {
  app_id: string;
  chain: string;
  address: string;
  proof: 'operator' | 'eip191' | 'eip1271';
  created_at: string;
}

/** A challenge to sign with an address: its message, valid until expires_at, used once. */
export interface AddressChallengeView {
  challenge_id: string;
  app_id: string;
  chain: string;
  address: string;
  message: string;
  expires_at: string;
}
