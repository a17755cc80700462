import { Registry } from 'prom-client';
import { X402Metrics } from '../src/x402/x402-metrics';

/** Issue 43: the relayer's balance on /metrics, and a warning each time it falls below X402_RELAYER_MIN_BALANCE. */
describe('x402 relayer balance metric and low-balance warning', () => {
  it('sets the gauge and warns once per fall below the minimum', async () => {
    const warnings: { message: string; fields: Record<string, string> }[] = [];
    const logger = {
      warn: (message: string, fields: Record<string, string>) => warnings.push({ message, fields }),
    } as never;
    const metrics = new X402Metrics('0xRelayer', 1000n, logger);
    const registry = new Registry();
    metrics.register(registry);

    metrics.observeBalance(5000n);
    expect(warnings).toEqual([]);
    expect(await registry.metrics()).toContain('x402_relayer_balance_wei{relayer="0xRelayer"} 5000');

    metrics.observeBalance(999n);
    metrics.observeBalance(500n);
    expect(warnings).toEqual([
      {
        message: 'x402 relayer balance is low: top it up, or settlements will be refused',
        fields: { relayer: '0xRelayer', balance: '999', minimum: '1000' },
      },
    ]);
    expect(await registry.metrics()).toContain('x402_relayer_balance_wei{relayer="0xRelayer"} 500');

    // topped up, then low again: warned again
    metrics.observeBalance(2000n);
    metrics.observeBalance(10n);
    expect(warnings.map((w) => w.fields.balance)).toEqual(['999', '10']);
  });
});
