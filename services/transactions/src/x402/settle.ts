import { getAddress, type Hex } from 'viem';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { Logger } from '@attest/common';
import type { PaymentRequestLookup } from '../kernel/settlement';
import type { TransactionService } from '../transactions';
import { keepClaim } from './claim-lease';
import {
  claimedAuthorizationMismatch,
  claimRefusal,
  paymentIdOf,
  purposeOf,
  referenceFor,
  referenceOf,
} from './payment-purpose';
import { REASONS, type Reason } from './reasons';
import { finishSettlement, paymentRequestRefusal, type Settled } from './settle-finish';
import {
  PaymentIdClaimed,
  settlementStore,
  type AuthorizationKey,
  type SettlementRow,
  type SettlementStore,
} from './settlement-store';
import { authorizationKey, toSpecAmount, type VerifiedPayment, type X402Token, type X402Verifier } from './verify';
import { SimulationFailed, type Relayer } from './x402-chain';
import type { X402Metrics } from './x402-metrics';

export interface SettlerOptions {
  /** X402_SETTLEMENTS_PER_MINUTE: settlements one app may claim per minute. */
  perMinute: number;
  /** How long a settle waits for its transaction's receipt before answering settlement_in_progress. */
  receiptTimeoutMs: number;
  /** How long a claim is held without word from its replica before another may finish it. */
  leaseMs: number;
  /** How often a settle of an authorization another one is settling looks for its outcome. */
  pollMs?: number;
}

export interface SettlerDeps {
  verifier: X402Verifier;
  relayer: Relayer | null;
  settlements: SettlementStore;
  transactions: Pick<TransactionService, 'recordOnce' | 'list'>;
  paymentRequests: PaymentRequestLookup;
  metrics: X402Metrics | null;
  logger: Logger;
}

/** A settle's claim was taken over before it stored its transaction hash: it sends nothing. */
class ClaimLost extends Error {}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * POST /x402/settle: verify, claim the authorization (one row per (network, token, payer, nonce)), submit
 * transferWithAuthorization from the relayer, wait for the receipt, record the payment as the app's
 * transaction. Every later settle of the same authorization answers the first one's outcome.
 */
export class X402Settler {
  constructor(
    private readonly deps: SettlerDeps,
    private readonly options: SettlerOptions,
  ) {}

  private get network() {
    return this.deps.verifier.options.network;
  }

  private fail(reason: Reason, message: string, payer?: string, transaction = ''): SettleResponse {
    return {
      success: false,
      errorReason: reason,
      errorMessage: message,
      transaction,
      network: this.network,
      ...(payer ? { payer } : {}),
    };
  }

  /** `takeOver`: the authorization's claim was abandoned before anything was submitted; claim it again. */
  async settle(
    appId: string,
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    takeOver = false,
  ): Promise<SettleResponse> {
    const parsed = this.deps.verifier.parse(payload, requirements);
    // a retry (or a second seller) of an authorization already claimed answers that claim's outcome
    const existing = !takeOver && 'key' in parsed && (await this.deps.settlements.find(parsed.key));
    if (existing) return this.answerClaimed(appId, existing, payload, requirements);
    const verdict = await this.deps.verifier.verify(appId, payload, requirements);
    // claimed between the look above and verify's: answer that claim's outcome, as a retry does
    const claimedMeanwhile =
      verdict.response.invalidReason === REASONS.nonceUsed &&
      'key' in parsed &&
      (await this.deps.settlements.find(parsed.key));
    if (claimedMeanwhile) return this.answerClaimed(appId, claimedMeanwhile, payload, requirements);
    if (!verdict.payment)
      return this.fail(
        verdict.response.invalidReason as Reason,
        verdict.response.invalidMessage ?? '',
        verdict.response.payer,
      );
    const payment = verdict.payment;
    // a payment-identifier names one payment: another authorization with it would move funds it cannot record
    const reference = referenceOf(payload, payment.authorization.nonce);
    if ((await this.deps.transactions.list({ appId, reference, limit: 1 })).length > 0)
      return this.fail(
        REASONS.paymentIdUsed,
        `This app already recorded a payment with reference ${reference} (the payment-identifier names another payment); nothing was submitted.`,
        payment.payer,
      );
    const relayer = this.deps.relayer;
    if (!relayer)
      return this.fail(
        REASONS.noRelayer,
        'This facilitator has no relayer (X402_RELAYER_KEY) to settle with.',
        payment.payer,
      );
    if ((await this.deps.settlements.recentClaims(appId, 60000)) >= this.options.perMinute)
      return this.fail(
        REASONS.rateLimited,
        `This app settled ${this.options.perMinute} x402 payments in the last minute (X402_SETTLEMENTS_PER_MINUTE); try again shortly.`,
        payment.payer,
      );
    const requestRefused = await this.requestRefusal(appId, requirements, {
      to: payment.authorization.to,
      token: payment.token,
      payer: payment.payer,
    });
    if (requestRefused) return requestRefused;
    let quote: { cost: bigint; balance: bigint };
    try {
      quote = await relayer.quote(payment.token.address, payment.authorization, payment.signature);
    } catch (err) {
      if (err instanceof SimulationFailed)
        return this.fail(REASONS.simulationFailed, `The transfer would revert: ${err.message}`, payment.payer);
      throw err;
    }
    this.deps.metrics?.observeBalance(quote.balance);
    if (quote.balance < quote.cost) {
      this.deps.logger.warn('x402 relayer cannot pay for a settlement', {
        relayer: relayer.address,
        balance: quote.balance.toString(),
        needed: quote.cost.toString(),
      });
      return this.fail(
        REASONS.relayerOutOfGas,
        'The facilitator’s relayer has too little native balance for gas; nothing was submitted. Try again later.',
        payment.payer,
      );
    }
    const claimKey = authorizationKey(this.network, payment.token.address, payment.authorization);
    let fence: number | null;
    try {
      fence = await this.deps.settlements.claim(claimKey, {
        appId,
        payTo: requirements.payTo.toLowerCase(),
        value: payment.authorization.value,
        leaseMs: this.options.leaseMs,
        human: payment.human ?? null,
        // what this payment is for: a settle of the authorization for anything else is refused (answerClaimed)
        purpose: purposeOf(payload, requirements),
        // claimed with it: another authorization with the same id, settled at the same time, is refused
        paymentId: paymentIdOf(payload),
        // with the key, payTo and value, what the payer signed: a settle answering this claim compares them
        validAfter: payment.authorization.validAfter,
        validBefore: payment.authorization.validBefore,
      });
    } catch (err) {
      if (!(err instanceof PaymentIdClaimed)) throw err;
      return this.fail(
        REASONS.paymentIdUsed,
        `This app is settling (or settled) another authorization with reference x402:id:${err.id} (the payment-identifier names another payment); nothing was submitted.`,
        payment.payer,
      );
    }
    if (fence === null) {
      const row = await this.deps.settlements.find(claimKey);
      // after a take-over that lost (the database's clock saw the lease as still running), wait: never loop
      return row
        ? this.answerClaimed(appId, row, payload, requirements, !takeOver)
        : this.fail(REASONS.inProgress, 'This authorization is being settled; settle again for its outcome.');
    }
    let hash: Hex | null = null;
    // the relayer's lock may be held longer than the lease (other settlements before this one): the lease is
    // extended while this settle waits, so no other settle takes the claim over from one that is alive
    const stopRenewal = keepClaim(this.deps.settlements, claimKey, fence, this.options.leaseMs, this.deps.logger);
    try {
      hash = await relayer.submit(payment.token.address, payment.authorization, payment.signature, async (h, db) => {
        // fenced: a claim taken over meanwhile (this replica stalled past its lease) is not this settle's to send
        if (!(await settlementStore(db).setTransactionHash(claimKey, fence, h, this.options.leaseMs)))
          throw new ClaimLost();
        hash = h;
      });
    } catch (err) {
      if (err instanceof ClaimLost) {
        // nothing was sent: the settle that holds the claim now answers for it
        const row = await this.deps.settlements.find(claimKey);
        return row
          ? this.answerClaimed(appId, row, payload, requirements, false)
          : this.fail(REASONS.inProgress, 'This authorization is being settled; settle again for its outcome.');
      }
      // signed and recorded, but did the node take it? If it does not know the transaction, nothing was sent
      if (!hash || !(await relayer.known(hash))) {
        await this.deps.settlements.release(claimKey, fence);
        this.deps.logger.error('x402 settlement not submitted', { error: (err as Error).message });
        return this.fail(
          REASONS.unexpectedSettle,
          'The transaction could not be submitted; nothing was sent.',
          payment.payer,
        );
      }
    } finally {
      stopRenewal();
    }
    return this.finish(
      appId,
      claimKey,
      hash,
      {
        payer: payment.payer,
        token: payment.token,
        to: payment.authorization.to,
        value: payment.authorization.value,
        tokenAmount: payment.tokenAmount,
        expiry: payment.authorization,
        human: payment.human ?? null,
        reference,
      },
      requirements,
    );
  }

  /** Waits for the receipt of the claim's transaction and writes the outcome every settle of it answers. */
  private finish(
    appId: string,
    key: AuthorizationKey,
    hash: Hex,
    payment: Settled,
    requirements: PaymentRequirements,
  ): Promise<SettleResponse> {
    const { relayer, settlements, transactions, metrics, logger } = this.deps;
    return finishSettlement(
      {
        relayer: relayer!,
        settlements,
        transactions,
        metrics,
        logger,
        network: this.network,
        chainName: this.deps.verifier.options.chainName,
        receiptTimeoutMs: this.options.receiptTimeoutMs,
        fail: (reason, message, payer, transaction) => this.fail(reason, message, payer, transaction),
      },
      appId,
      key,
      hash,
      payment,
      requirements,
    );
  }

  /**
   * What the claim stored of its payment, as finish records it when a settle finishes another one's transaction:
   * the payer, `to` and value the claim holds (the presented authorization was found to be the same), its
   * validBefore (025) and the reference its payment-identifier and resource make (024; a claim from before 024
   * kept neither: the request's, as then).
   */
  private claimedPayment(row: SettlementRow, token: X402Token, payload: PaymentPayload, nonce: Hex): Settled {
    const from = getAddress(row.payer);
    return {
      payer: from,
      token,
      to: getAddress(row.payTo),
      value: row.value,
      tokenAmount: toSpecAmount(BigInt(row.value), token.decimals),
      expiry:
        row.validBefore === null
          ? null
          : {
              from,
              to: getAddress(row.payTo),
              value: row.value,
              validAfter: row.validAfter ?? '0',
              validBefore: row.validBefore,
              nonce,
            },
      // the person the first settle's proof named (its claim keeps them)
      human: row.human,
      reference:
        row.requirementsHash === null ? referenceOf(payload, nonce) : referenceFor(row.paymentId, row.resource, nonce),
    };
  }

  /** paymentRequestRefusal (settle-finish.ts) as this settle's answer, or null. */
  private async requestRefusal(
    appId: string,
    requirements: PaymentRequirements,
    payment: { to: string; token: X402Token; payer: string },
  ): Promise<SettleResponse | null> {
    const refused = await paymentRequestRefusal(
      this.deps.paymentRequests,
      this.deps.verifier.options.chainName,
      appId,
      requirements,
      payment,
    );
    return refused && this.fail(refused.reason, refused.message, payment.payer);
  }

  /**
   * Why the settle of `presented` (its signature checked) may not answer `row`'s claim, as its answer: the
   * authorization is not the one claimed (claimedAuthorizationMismatch), or claimRefusal's (payment-purpose.ts);
   * null for a retry of the claim's payment.
   */
  private refusedBy(
    appId: string,
    row: SettlementRow,
    presented: VerifiedPayment,
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): SettleResponse | null {
    const payer = getAddress(row.payer);
    const mismatch = claimedAuthorizationMismatch(row, presented.authorization);
    if (mismatch) return this.fail(REASONS.nonceUsed, mismatch, payer);
    const refused = claimRefusal(appId, row, purposeOf(payload, requirements), requirements);
    return refused && this.fail(refused.reason, refused.message, payer);
  }

  /**
   * A settle of an authorization already claimed: the first outcome, once there is one. Only for the payer's
   * own authorization (its signature checked, as verify checks it) that is the one the claim holds: the whole
   * authorization is public once its transaction is, and anyone may present it again with another signature.
   */
  private async answerClaimed(
    appId: string,
    row: SettlementRow,
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    mayTakeOver = true,
  ): Promise<SettleResponse> {
    const parsed = this.deps.verifier.parse(payload, requirements);
    const refuse = (r: { response: { invalidReason?: string; invalidMessage?: string; payer?: string } }) =>
      this.fail(r.response.invalidReason as Reason, r.response.invalidMessage ?? '', r.response.payer);
    // every caller parsed it first; a payload parse refuses is answered nothing of the claim
    if (!('key' in parsed)) return refuse(parsed);
    const presented = parsed.payment;
    const unsigned = await this.deps.verifier.signatureRefusal(presented, requirements);
    if (unsigned) return refuse(unsigned);
    const refusal = this.refusedBy(appId, row, presented, payload, requirements);
    if (refusal) return refusal;
    const deadline = Date.now() + this.options.receiptTimeoutMs;
    let current: SettlementRow | null = row;
    while (current && !current.outcome) {
      if (mayTakeOver && current.leaseUntil.getTime() < Date.now()) {
        // its replica went quiet: one with a transaction is finished here (by the one settle that takes its
        // lease), from what its claim stored; one without is settled afresh (claim takes it over, once)
        if (!current.transactionHash) return this.settle(appId, payload, requirements, true);
        const claimed = this.claimedPayment(current, presented.token, payload, presented.authorization.nonce);
        // the payment request it will be recorded for passes the checks a first settle makes
        const refused = await this.requestRefusal(appId, requirements, claimed);
        if (refused) return { ...refused, transaction: current.transactionHash };
        if (await this.deps.settlements.takeLease(current, this.options.leaseMs))
          return this.finish(appId, current, current.transactionHash as Hex, claimed, requirements);
      }
      if (Date.now() > deadline) break;
      await sleep(this.options.pollMs ?? 100);
      current = await this.deps.settlements.find(row);
      // given up meanwhile (nothing sent) and claimed again, perhaps for another payment: checked afresh
      const changed = current && this.refusedBy(appId, current, presented, payload, requirements);
      if (changed) return changed;
    }
    if (current?.outcome) return current.outcome;
    return this.fail(
      REASONS.inProgress,
      'This authorization is being settled; settle again for its outcome.',
      getAddress(row.payer),
      current?.transactionHash ?? '',
    );
  }
}
