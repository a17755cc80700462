import { Gauge, type Registry } from 'prom-client';
import { counter, registerAll } from '../kernel/metrics';

/** What the watcher reports for /readyz and the lag gauges: read when asked, from the RPCs and the stored cursor. */
export interface WatchLag {
  head_block: number;
  final_block: number;
  processed_block: number;
  /** Final blocks not scanned yet: final_block − processed_block. */
  lag_blocks: number;
}

/** The chain watcher's RPCs and progress, on the admin port's /metrics. */
export class ChainMetrics {
  readonly rpcErrors = counter(
    'chain_rpc_errors_total',
    'JSON-RPC calls that failed (error, timeout, unusable answer), by chain and RPC; the next RPC was tried.',
    ['chain', 'rpc'],
  );
  readonly rpcUp = new Gauge({
    name: 'chain_rpc_up',
    help: '1 while an RPC answers, 0 while it is backed off after a failure; by chain and RPC.',
    labelNames: ['chain', 'rpc'],
    registers: [],
  });
  readonly disagreements = counter(
    'chain_quorum_disagreements_total',
    'Blocks that deciding RPCs did not agree on (CHAIN_RPC_QUORUM); the decision waited for the next pass.',
    ['chain'],
  );
  private lagSource?: { chain: string; read(): Promise<WatchLag> };
  private reading?: Promise<WatchLag | null>;

  readonly lag = this.lagGauge(
    'chain_watch_lag_blocks',
    'Final blocks the chain watcher has not scanned yet (final block − last processed block), by chain.',
    (lag) => lag.lag_blocks,
  );
  readonly head = this.lagGauge(
    'chain_watch_head_block',
    'The chain head an RPC reports, by chain (read at scrape time).',
    (lag) => lag.head_block,
  );
  readonly processed = this.lagGauge(
    'chain_watch_processed_block',
    'The last block the chain watcher scanned for transfers (its stored cursor), by chain.',
    (lag) => lag.processed_block,
  );

  /** The lag gauges read from here at every scrape, so a watcher that stopped shows a growing lag. */
  watch(chain: string, read: () => Promise<WatchLag>): void {
    this.lagSource = { chain, read };
  }

  private lagGauge(name: string, help: string, value: (lag: WatchLag) => number): Gauge {
    const readOnce = () => this.readOnce();
    const source = () => this.lagSource;
    return new Gauge({
      name,
      help,
      labelNames: ['chain'],
      registers: [],
      async collect() {
        const chain = source()?.chain;
        if (!chain) return;
        const lag = await readOnce();
        // no RPC answered or nothing scanned yet: no value rather than a stale one
        if (lag) this.set({ chain }, value(lag));
        else this.remove({ chain });
      },
    });
  }

  /** One read per scrape, shared by the three gauges (prom-client collects them concurrently). */
  private readOnce(): Promise<WatchLag | null> {
    this.reading ??= this.lagSource!.read()
      .catch(() => null)
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  register(registry: Registry): void {
    registerAll(registry, [this.rpcErrors, this.rpcUp, this.disagreements, this.lag, this.head, this.processed]);
  }
}
