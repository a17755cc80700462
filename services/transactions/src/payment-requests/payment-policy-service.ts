import type { AuditActor, AuditLog, Db, Queryable } from '@attest/common';
import { paymentRequestStore } from './payment-request-store';
import type { PaymentPolicy } from './payment-request-types';

/**
 * An app's payment policy (underpayment tolerance, overpayment handling, default expiry), read and set by
 * the operator or the app's key; each change audited payment_policy.changed.
 */
export class PaymentPolicyService {
  constructor(
    private readonly db: Db,
    private readonly audit?: Pick<AuditLog, 'record'>,
  ) {}

  private store = (db: Queryable = this.db) => paymentRequestStore(db);

  policy(appId: string): Promise<PaymentPolicy> {
    return this.store().policy(appId);
  }

  /** Sets the app's payment policy (by the operator or the app's key), audited payment_policy.changed. */
  async setPolicy(appId: string, policy: PaymentPolicy, actor: AuditActor): Promise<PaymentPolicy> {
    return this.db.transaction(async (tx) => {
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
  }
}
