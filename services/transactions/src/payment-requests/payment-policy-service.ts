import {
  LocalCache,
  type AuditActor,
  type AuditLog,
  type Db,
  type InvalidationBus,
  type Queryable,
} from '@attest/common';
import { paymentRequestStore } from './payment-request-store';
import type { PaymentPolicy } from './payment-request-types';

/**
 * An app's payment policy (underpayment tolerance, overpayment handling, default expiry), read and set by
 * the operator or the app's key; each change audited payment_policy.changed.
 */
export class PaymentPolicyService {
  /**
   * Each app's policy as read (the customer's payment page reads it on every view); dropped here and on
   * every replica when it is set, with a TTL as the backstop for a missed message.
   */
  private readonly cache?: LocalCache<PaymentPolicy>;

  constructor(
    private readonly db: Db,
    private readonly audit?: Pick<AuditLog, 'record'>,
    bus?: InvalidationBus,
  ) {
    if (bus) this.cache = new LocalCache<PaymentPolicy>(bus, { name: 'payment-policies', ttlMs: 60000, max: 10000 });
  }

  private store = (db: Queryable = this.db) => paymentRequestStore(db);

  async policy(appId: string): Promise<PaymentPolicy> {
    if (!this.cache) return this.store().policy(appId);
    return (await this.cache.get(appId, () => this.store().policy(appId)))!;
  }

  /** Sets the app's payment policy (by the operator or the app's key), audited payment_policy.changed. */
  async setPolicy(appId: string, policy: PaymentPolicy, actor: AuditActor): Promise<PaymentPolicy> {
    const set = await this.db.transaction(async (tx) => {
      const set = await this.store(tx).setPolicy(appId, policy);
      await this.audit?.record(
        {
          type: 'payment_policy.changed',
          actor,
          subject: appId,
          detail: {
            underpayment_tolerance_percent: set.underpaymentTolerancePercent,
            flag_overpayment: set.flagOverpayment,
            default_expires_in: set.defaultExpiresInSeconds,
            display_name: set.displayName,
            return_origins: set.returnOrigins,
          },
        },
        tx,
      );
      return set;
    });
    await this.cache?.invalidate(appId);
    return set;
  }
}
