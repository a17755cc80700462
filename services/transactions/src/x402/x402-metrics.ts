import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '@attest/common';

/**
 * The relayer's native balance on /metrics (x402_relayer_balance_wei), and a warning in the log while it is
 * below X402_RELAYER_MIN_BALANCE (once per fall below, again after it was topped up and fell again).
 */
export class X402Metrics {
  private readonly balance = new Gauge({
    name: 'x402_relayer_balance_wei',
    help: 'Native balance of the x402 relayer account (pays the gas of settlements), in wei',
    labelNames: ['relayer'],
    registers: [],
  });
  private low = false;

  constructor(
    private readonly relayer: string,
    private readonly minBalance: bigint,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  register(registry: Registry): void {
    registry.registerMetric(this.balance);
  }

  observeBalance(wei: bigint): void {
    this.balance.set({ relayer: this.relayer }, Number(wei));
    const low = wei < this.minBalance;
    if (low && !this.low)
      this.logger.warn('x402 relayer balance is low: top it up, or settlements will be refused', {
        relayer: this.relayer,
        balance: wei.toString(),
        minimum: this.minBalance.toString(),
      });
    this.low = low;
  }
}
