import { getAddress, isAddress, isHex, type Address, type Hex } from 'viem';
import type { PaymentPayload, PaymentRequirements, VerifyResponse } from '@x402/core/types';
import { isEIP3009Payload, type ExactEvmPayloadV2 } from '@x402/evm';
import { SPEC_DECIMALS } from '../kernel/chain-tokens';
import { HUMAN_EXTENSION, humanRequirement, type HumanPayer, type HumanProofs } from './human-proof';
import { claimedForOther } from './payment-purpose';
import { REASONS, type Reason } from './reasons';
import type { AuthorizationKey, SettlementRow, SettlementStore } from './settlement-store';
import { authorizationTypedData, type Authorization, type X402Chain } from './x402-chain';

/** Whether an app registered an address as its own to receive at (the receiving-addresses feature's check). */
export interface ReceivingAddressCheck {
  isReceivingAddress(appId: string, chain: string, address: string): Promise<boolean>;
}

/** A token x402 pays in: an ERC-20 of CHAIN_TOKENS for CHAIN_NAME. */
export interface X402Token {
  code: string;
  address: Address;
  decimals: number;
}

export interface VerifierOptions {
  /** CAIP-2 id of the configured chain, eip155:<chain id>. */
  network: `${string}:${string}`;
  /** CHAIN_NAME: the chain recorded transactions and receiving addresses are on. */
  chainName: string;
  /** By lower-case contract address. */
  tokens: ReadonlyMap<string, X402Token>;
  /** X402_MAX_AMOUNT: the largest amount one payment may carry, 6 decimals (as token_amount); none when unset. */
  maxAmount?: bigint;
  /**
   * X402_MIN_AMOUNT: the smallest amount one payment may carry, 6 decimals. Every settlement costs the
   * relayer gas: a payment of nothing (or next to nothing) would make the operator pay for the seller's calls.
   */
  minAmount: bigint;
  now?: () => number;
}

/** What a verify found valid: what settle submits and records. */
export interface VerifiedPayment {
  token: X402Token;
  authorization: Authorization;
  signature: Hex;
  payer: Address;
  /** The value in 6 decimals (token_amount). */
  tokenAmount: bigint;
  /** The person behind the agent, when the seller asked for it (the attest-human extension). */
  human?: HumanPayer;
}

export type Verdict = { response: VerifyResponse; payment?: VerifiedPayment };

// validBefore must leave this many seconds for the transaction to be mined (as @x402/evm's facilitator asks)
const MIN_VALIDITY_SECONDS = 6;
const UINT = /^\d{1,78}$/;

export interface VerifierDeps {
  chain: X402Chain;
  receiving: ReceivingAddressCheck;
  settlements: SettlementStore;
  /** The attest-human extension's check; null when X402_IDENTITY_ISSUER is not set. */
  humans?: HumanProofs | null;
}

/** POST /x402/verify's checks; none moves funds. */
export class X402Verifier {
  constructor(
    private readonly deps: VerifierDeps,
    readonly options: VerifierOptions,
  ) {}

  /**
   * The checks that need no chain nor store: the request names the configured network, one of its tokens, an
   * EIP-3009 authorization of the right shape. The payment and its key, or the verdict refusing it.
   */
  parse(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): { payment: VerifiedPayment; key: AuthorizationKey } | Verdict {
    const raw = payload.payload as ExactEvmPayloadV2;
    const payer = payerOf(raw);
    const invalid = (reason: Reason, message: string): Verdict => refusal(reason, message, payer);
    if (payload.x402Version !== 2) return invalid(REASONS.version, 'x402Version must be 2.');
    if (requirements.scheme !== 'exact')
      return invalid(
        REASONS.unsupportedScheme,
        `paymentRequirements.scheme must be exact (got ${requirements.scheme}).`,
      );
    if (payload.accepted.scheme !== 'exact')
      return invalid(REASONS.scheme, 'paymentPayload.accepted.scheme must be exact.');
    if (requirements.network !== this.options.network)
      return invalid(REASONS.network, `paymentRequirements.network must be ${this.options.network}.`);
    if (payload.accepted.network !== requirements.network)
      return invalid(REASONS.networkMismatch, 'paymentPayload.accepted.network must be paymentRequirements.network.');
    const token = isAddress(requirements.asset) ? this.options.tokens.get(requirements.asset.toLowerCase()) : undefined;
    if (!token)
      return invalid(
        REASONS.requirements,
        `paymentRequirements.asset must be one of ${[...this.options.tokens.values()].map((t) => `${t.code} (${t.address})`).join(', ')}.`,
      );
    if (!isAddress(requirements.payTo) || !UINT.test(requirements.amount))
      return invalid(
        REASONS.requirements,
        'paymentRequirements.payTo must be an address and amount an integer string.',
      );
    if (typeof raw !== 'object' || raw === null || !isEIP3009Payload(raw))
      return invalid(REASONS.unsupportedPayload, 'Only EIP-3009 authorizations are settled here.');
    const a = raw.authorization;
    const shapeProblem = authorizationProblem(a, raw.signature);
    if (shapeProblem) return invalid(REASONS.payload, shapeProblem);
    const value = BigInt(a.value);
    if (!representable6(value, token.decimals))
      return invalid(REASONS.value, `authorization.value is finer than ${SPEC_DECIMALS} decimals of ${token.code}.`);
    return {
      payment: {
        token,
        authorization: a,
        signature: raw.signature as Hex,
        payer: a.from,
        tokenAmount: toSpecAmount(value, token.decimals),
      },
      key: authorizationKey(this.options.network, token.address, a),
    };
  }

  async verify(appId: string, payload: PaymentPayload, requirements: PaymentRequirements): Promise<Verdict> {
    const parsed = this.parse(payload, requirements);
    if (!('key' in parsed)) return parsed;
    const { payment, key } = parsed;
    const { token, authorization: a } = payment;
    const invalid = (reason: Reason, message: string): Verdict => refusal(reason, message, a.from);

    const unsigned = await this.signatureRefusal(payment, requirements);
    if (unsigned) return unsigned;

    if (getAddress(a.to) !== getAddress(requirements.payTo))
      return invalid(REASONS.recipientMismatch, 'authorization.to must be paymentRequirements.payTo.');
    if (!(await this.deps.receiving.isReceivingAddress(appId, this.options.chainName, requirements.payTo)))
      return invalid(
        REASONS.notRegistered,
        `paymentRequirements.payTo ${requirements.payTo} is not an address this app registered to receive at on ${this.options.chainName}.`,
      );

    const now = Math.floor((this.options.now ?? Date.now)() / 1000);
    if (BigInt(a.validBefore) < BigInt(now + MIN_VALIDITY_SECONDS))
      return invalid(REASONS.validBefore, 'authorization.validBefore has passed (or leaves no time to settle).');
    if (BigInt(a.validAfter) > BigInt(now))
      return invalid(REASONS.validAfter, 'authorization.validAfter is in the future.');
    const value = BigInt(a.value);
    if (value < BigInt(requirements.amount))
      return invalid(REASONS.value, `authorization.value ${a.value} is less than the ${requirements.amount} required.`);
    if (this.options.maxAmount !== undefined && payment.tokenAmount > this.options.maxAmount)
      return invalid(
        REASONS.amountOverLimit,
        'authorization.value is more than one x402 payment may carry here (X402_MAX_AMOUNT).',
      );
    if (payment.tokenAmount < this.options.minAmount)
      return invalid(
        REASONS.amountUnderLimit,
        `authorization.value is less than the smallest x402 payment settled here: ${this.options.minAmount} in 6 decimals (X402_MIN_AMOUNT).`,
      );

    const [used, claim, balance] = await Promise.all([
      this.deps.chain.authorizationUsed(token.address, a),
      this.deps.settlements.find(key),
      this.deps.chain.balanceOf(token.address, a.from),
    ]);
    if (used) return invalid(REASONS.nonceUsed, 'This authorization’s nonce is already used on chain.');
    if (claim && inFlight(claim)) return invalid(REASONS.nonceUsed, 'This authorization is already being settled.');
    if (claim && claimedForOther(claim, payload, requirements))
      return invalid(REASONS.nonceUsed, 'This authorization is claimed for another resource or other requirements.');
    if (balance < value)
      return invalid(REASONS.insufficientBalance, `The payer holds less than ${a.value} of ${token.code}.`);
    // only when the seller asks for the human behind the agent (human-proof.ts)
    if (requirements.extra?.[HUMAN_EXTENSION] !== undefined) return this.withHuman(payload, requirements, payment);
    return { response: { isValid: true, payer: a.from }, payment };
  }

  /**
   * The payer's signature: the requirements carry the token's EIP-712 name and version (the token's own, when it
   * reports them), and the signature is the payer's over the authorization (an EOA's, or a contract wallet's by
   * ERC-1271). The refusal, or null. Settle checks an authorization presented again for a claim with it too.
   */
  async signatureRefusal(payment: VerifiedPayment, requirements: PaymentRequirements): Promise<Verdict | null> {
    const { token, authorization: a, signature } = payment;
    const invalid = (reason: Reason, message: string): Verdict => refusal(reason, message, a.from);
    const name = requirements.extra?.name;
    const version = requirements.extra?.version;
    if (typeof name !== 'string' || typeof version !== 'string')
      return invalid(
        REASONS.missingDomain,
        'paymentRequirements.extra must carry the token’s EIP-712 name and version.',
      );
    const domain = await this.deps.chain.tokenDomain(token.address);
    if (domain && domain.name !== name)
      return invalid(
        REASONS.tokenName,
        `paymentRequirements.extra.name must be the token’s EIP-712 name (${domain.name}).`,
      );
    if (domain && domain.version !== version)
      return invalid(
        REASONS.tokenVersion,
        `paymentRequirements.extra.version must be the token’s (${domain.version}).`,
      );
    const typed = authorizationTypedData({ name, version, chainId: this.deps.chain.chainId, token: token.address }, a);
    if (!(await this.deps.chain.signedBy(typed, a.from, signature)))
      return invalid(REASONS.signature, 'The signature is not the payer’s over this authorization.');
    return null;
  }

  /** The attest-human extension: the payment, valid otherwise, with the person behind the agent, or refused. */
  private async withHuman(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    payment: VerifiedPayment,
  ): Promise<Verdict> {
    const required = humanRequirement(requirements);
    if (typeof required === 'string') return refusal(REASONS.requirements, required, payment.payer);
    if (!required) return { response: { isValid: true, payer: payment.payer }, payment };
    if (!this.deps.humans)
      return refusal(
        REASONS.humanNotConfigured,
        `This facilitator cannot check the human behind an agent (X402_IDENTITY_ISSUER is not set); leave out paymentRequirements.extra["${HUMAN_EXTENSION}"] or ask the operator.`,
        payment.payer,
      );
    const checked = await this.deps.humans.check(payload, required);
    if ('reason' in checked) return refusal(checked.reason, checked.message, payment.payer);
    return {
      response: { isValid: true, payer: payment.payer, extensions: { [HUMAN_EXTENSION]: checked.human } },
      payment: { ...payment, human: checked.human },
    };
  }
}

/**
 * Whether a claim holds its authorization: settled (every settle of it answers that first outcome), or being
 * settled. One whose replica stopped before submitting anything (lease over, no transaction) holds it no more.
 */
const inFlight = (claim: SettlementRow) =>
  claim.outcome !== null || claim.transactionHash !== null || claim.leaseUntil.getTime() > Date.now();

const refusal = (reason: Reason, message: string, payer?: string): Verdict => ({
  response: { isValid: false, invalidReason: reason, invalidMessage: message, ...(payer ? { payer } : {}) },
});

function payerOf(raw: unknown): Address | undefined {
  const from = (raw as { authorization?: { from?: unknown } } | null)?.authorization?.from;
  return typeof from === 'string' && isAddress(from) ? from : undefined;
}

export const authorizationKey = (network: string, token: Address, a: Authorization): AuthorizationKey => ({
  network,
  token: token.toLowerCase(),
  payer: a.from.toLowerCase(),
  nonce: a.nonce.toLowerCase(),
});

function authorizationProblem(a: Authorization | undefined, signature: unknown): string | null {
  if (typeof a !== 'object' || a === null) return 'payload.authorization must be an object.';
  for (const field of ['from', 'to'] as const)
    if (typeof a[field] !== 'string' || !isAddress(a[field]))
      return `payload.authorization.${field} must be an address.`;
  for (const field of ['value', 'validAfter', 'validBefore'] as const)
    if (typeof a[field] !== 'string' || !UINT.test(a[field]))
      return `payload.authorization.${field} must be an integer string.`;
  if (typeof a.nonce !== 'string' || !isHex(a.nonce) || a.nonce.length !== 66)
    return 'payload.authorization.nonce must be 0x followed by 64 hexadecimal digits.';
  if (typeof signature !== 'string' || !isHex(signature) || signature.length < 4)
    return 'payload.signature must be 0x-prefixed hexadecimal.';
  return null;
}

/** Base units of a token with `decimals` decimals in 6 decimals (token_amount); call when representable6. */
export const toSpecAmount = (value: bigint, decimals: number) =>
  decimals >= SPEC_DECIMALS
    ? value / 10n ** BigInt(decimals - SPEC_DECIMALS)
    : value * 10n ** BigInt(SPEC_DECIMALS - decimals);

/** Whether base units of the token are a whole number of 6-decimal units (what a recorded payment carries). */
function representable6(value: bigint, decimals: number): boolean {
  return decimals <= SPEC_DECIMALS || value % 10n ** BigInt(decimals - SPEC_DECIMALS) === 0n;
}
