import type { Address, Hex } from 'viem';
import type { PaymentRequirements, SettleResponse } from '@x402/core/types';
import { AppError, type Logger } from '@attest/common';
import type { PaymentRequestLookup } from '../kernel/settlement';
import type { TransactionService } from '../transactions';
import { HUMAN_EXTENSION } from './human-proof';
import { paymentRequestIdOf } from './payment-purpose';
import { REASONS, type Reason } from './reasons';
import type { AuthorizationKey, SettlementStore } from './settlement-store';
import type { X402Token } from './verify';
import type { Authorization, Relayer } from './x402-chain';
import type { X402Metrics } from './x402-metrics';

/**
 * What finish records and answers: a first settle's verified payment, or, for a settle that finishes another
 * one's transaction, what the claim stored (never the request's: its payload is not what was sent).
 */
export interface Settled {
  payer: Address;
  token: X402Token;
  /** The authorization's `to` and value (base units). */
  to: string;
  value: string;
  /** The value in 6 decimals (token_amount). */
  tokenAmount: bigint;
  /**
   * The authorization sent, for telling a transaction that can never land (past its validBefore); null when the
   * claim did not store its validBefore (claimed before 025): such a transaction is then never taken as lost.
   */
  expiry: Authorization | null;
  /** The person behind the agent the attest-human proof named, when the seller asked. */
  human?: { sub: string; agent: string } | null;
  /** The recorded transaction's reference (payment-purpose.ts referenceOf). */
  reference: string;
}

export interface FinishDeps {
  relayer: Relayer;
  settlements: SettlementStore;
  transactions: Pick<TransactionService, 'recordOnce'>;
  metrics: X402Metrics | null;
  logger: Logger;
  network: SettleResponse['network'];
  chainName: string;
  receiptTimeoutMs: number;
  fail(reason: Reason, message: string, payer?: string, transaction?: string): SettleResponse;
}

/** Waits for the receipt of the claim's transaction and writes the outcome every settle of it answers. */
export async function finishSettlement(
  deps: FinishDeps,
  appId: string,
  key: AuthorizationKey,
  hash: Hex,
  payment: Settled,
  requirements: PaymentRequirements,
): Promise<SettleResponse> {
  const { relayer } = deps;
  let status: 'success' | 'reverted';
  try {
    status = await relayer.outcome(hash, deps.receiptTimeoutMs);
  } catch {
    if (payment.expiry && (await relayer.neverLands(hash, payment.token.address, payment.expiry))) {
      // signed and recorded but never broadcast (its replica stopped in between) or dropped, and now expired
      const outcome = deps.fail(
        REASONS.validBefore,
        `Transaction ${hash} never reached the chain and the authorization expired; nothing moved.`,
        payment.payer,
      );
      await deps.settlements.finish(key, outcome, null);
      return (await deps.settlements.find(key))?.outcome ?? outcome;
    }
    // nobody waits for the receipt any more: the next settle of the authorization takes the claim and reads it
    await deps.settlements.releaseLease(key);
    return deps.fail(
      REASONS.inProgress,
      'The transaction is not mined yet; settle again for its outcome.',
      payment.payer,
      hash,
    );
  }
  void relayer.balance().then(
    (b) => deps.metrics?.observeBalance(b),
    () => undefined,
  );
  if (status === 'reverted') {
    const outcome = deps.fail(REASONS.transactionFailed, 'The transfer reverted on chain.', payment.payer, hash);
    await deps.settlements.finish(key, outcome, null);
    return (await deps.settlements.find(key))?.outcome ?? outcome;
  }
  let transactionId: string | null = null;
  try {
    const { transaction } = await deps.transactions.recordOnce(
      {
        appId,
        type: 'pay',
        reference: payment.reference,
        transactionHash: hash,
        status: 'pending',
        from: payment.payer.toLowerCase(),
        to: payment.to.toLowerCase(),
        chain: deps.chainName,
        token: payment.token.code,
        tokenAmount: payment.tokenAmount.toString(),
        paymentRequestId: paymentRequestIdOf(requirements) ?? null,
        human: payment.human ? { sub: payment.human.sub, agent: payment.human.agent } : null,
      },
      'x402',
    );
    transactionId = transaction.id;
  } catch (err) {
    // the transfer is on chain: the answer says so; the operator sees why it was not recorded
    deps.logger.error('x402 settlement not recorded as a transaction', {
      transaction: hash,
      app: appId,
      error: (err as Error).message,
    });
  }
  const outcome: SettleResponse = {
    success: true,
    payer: payment.payer,
    transaction: hash,
    network: deps.network,
    amount: payment.value,
    ...(transactionId ? { extra: { transaction_id: transactionId } } : {}),
    // the person behind the agent, as the attest-human proof named them (when the seller asked)
    ...(payment.human
      ? { extensions: { [HUMAN_EXTENSION]: { sub: payment.human.sub, agent: payment.human.agent } } }
      : {}),
  };
  await deps.settlements.finish(key, outcome, transactionId);
  return (await deps.settlements.find(key))?.outcome ?? outcome;
}

/**
 * Why the payment request the requirements name (extra.payment_request_id) may not be paid by this payment
 * (its `to`, its token), as a reason and message; null when they name none or it may: the app's own request, on
 * this chain, to the authorization's `to` (= payTo), accepting its token.
 */
export async function paymentRequestRefusal(
  lookup: PaymentRequestLookup,
  chainName: string,
  appId: string,
  requirements: PaymentRequirements,
  payment: { to: string; token: X402Token },
): Promise<{ reason: Reason; message: string } | null> {
  const requestId = paymentRequestIdOf(requirements);
  if (!requestId) return null;
  try {
    const request = await lookup.forPayment(appId, requestId);
    const to = payment.to.toLowerCase();
    if (request.chain !== chainName || request.to.toLowerCase() !== to || requirements.payTo.toLowerCase() !== to)
      return {
        reason: REASONS.requirements,
        message: `payTo must be payment request ${requestId}'s to on ${request.chain}.`,
      };
    if (!request.accepted.some((t) => t.token === payment.token.code))
      return {
        reason: REASONS.requirements,
        message: `Payment request ${requestId} does not accept ${payment.token.code}.`,
      };
    return null;
  } catch (err) {
    if (err instanceof AppError) return { reason: REASONS.requirements, message: err.detail };
    throw err;
  }
}
