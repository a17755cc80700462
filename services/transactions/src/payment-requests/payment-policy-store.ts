import type { Queryable } from '@attest/common';
import { DEFAULT_PAYMENT_POLICY, type PaymentPolicy } from './payment-request-types';

/** A numeric(5,2) as Postgres prints it, without trailing zeros: 2.50 → 2.5, 0.00 → 0. */
export const percent = (value: string | number) => String(Number(value));

interface PolicyRow {
  underpayment_tolerance_percent: string;
  flag_overpayment: boolean;
  default_expires_in_seconds: number;
  display_name: string | null;
  return_origins: string;
}
const POLICY_COLUMNS =
  'underpayment_tolerance_percent, flag_overpayment, default_expires_in_seconds, display_name, return_origins';
const toPolicy = (row: PolicyRow): PaymentPolicy => ({
  underpaymentTolerancePercent: percent(row.underpayment_tolerance_percent),
  flagOverpayment: row.flag_overpayment,
  defaultExpiresInSeconds: row.default_expires_in_seconds,
  displayName: row.display_name,
  returnOrigins: JSON.parse(row.return_origins) as string[],
});

/** payment_amount_policies: an app's payment policy (tolerance, overpayment, expiry, page settings). */
export function paymentPolicyStore(db: Queryable) {
  return {
    async policy(appId: string): Promise<PaymentPolicy> {
      const [row] = await db.query<PolicyRow>(
        `SELECT ${POLICY_COLUMNS} FROM payment_amount_policies WHERE app_id = $1`,
        [appId],
      );
      return row ? toPolicy(row) : DEFAULT_PAYMENT_POLICY;
    },
    async setPolicy(appId: string, policy: PaymentPolicy): Promise<PaymentPolicy> {
      const [row] = await db.query<PolicyRow>(
        `INSERT INTO payment_amount_policies (app_id, underpayment_tolerance_percent, flag_overpayment,
           default_expires_in_seconds, display_name, return_origins)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (app_id) DO UPDATE SET underpayment_tolerance_percent = $2, flag_overpayment = $3,
           default_expires_in_seconds = $4, display_name = $5, return_origins = $6, updated_at = now()
         RETURNING ${POLICY_COLUMNS}`,
        [
          appId,
          policy.underpaymentTolerancePercent,
          policy.flagOverpayment,
          policy.defaultExpiresInSeconds,
          policy.displayName,
          JSON.stringify(policy.returnOrigins),
        ],
      );
      return toPolicy(row);
    },
  };
}
