import type { PublicClient } from 'viem';
import type { Logger } from '@attest/common';
import type { ChainMetrics } from './chain-metrics';

export interface RpcEndpoint {
  /** How the RPC is named in metrics and logs: its position and host, never its path (it often holds an API key). */
  label: string;
  client: PublicClient;
}

export interface RpcPoolOptions {
  chain: string;
  /** How many RPCs must return the same hash for the block that decides. */
  quorum: number;
  /** Back-off after an RPC's first failure; doubled per further failure, up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  now?: () => number;
}

/** What the deciding RPCs say about the block a receipt is in. */
export type BlockVerdict = 'agreed' | 'reorged' | 'disagreed';

export class QuorumUnavailable extends Error {}

interface Health {
  failures: number;
  downUntil: number;
}

/** An RPC error for logs and /readyz: viem's short message names the method and status; its full message names the URL. */
export function rpcErrorMessage(err: unknown): string {
  return (err as { shortMessage?: string }).shortMessage ?? (err as Error).message ?? String(err);
}

/** "2:rpc.example.org": position (1-based) and host of an RPC URL. */
export function rpcLabel(url: string, index: number): string {
  return `${index + 1}:${new URL(url).host}`;
}

/**
 * Several JSON-RPC endpoints of one chain. A call goes to the first RPC that is not backed off and
 * fails over to the next when it errors or times out; a failing RPC is backed off (exponentially) and
 * tried again after, or sooner when every other one fails too. The block that decides a payment is
 * read from `quorum` RPCs, which must agree on its hash.
 */
export class RpcPool {
  private readonly health: Health[];

  constructor(
    readonly endpoints: readonly RpcEndpoint[],
    private readonly options: RpcPoolOptions,
    private readonly metrics: ChainMetrics,
    private readonly logger: Logger,
  ) {
    if (endpoints.length === 0) throw new Error('an RPC pool needs at least one RPC');
    if (options.quorum > endpoints.length)
      throw new Error(`a quorum of ${options.quorum} needs as many RPCs (got ${endpoints.length})`);
    this.health = endpoints.map(() => ({ failures: 0, downUntil: 0 }));
    // every series from the start, at 0 errors, so rates and alerts see the first one
    for (const { label } of endpoints) {
      metrics.rpcUp.set({ chain: options.chain, rpc: label }, 1);
      metrics.rpcErrors.inc({ chain: options.chain, rpc: label }, 0);
    }
    metrics.disagreements.inc({ chain: options.chain }, 0);
  }

  /** Each RPC by label: answering (up) or backed off, and its failures in a row. */
  state(): { rpc: string; up: boolean; failures: number }[] {
    const now = (this.options.now ?? Date.now)();
    return this.endpoints.map((e, i) => ({
      rpc: e.label,
      up: this.health[i].downUntil <= now,
      failures: this.health[i].failures,
    }));
  }

  /** Endpoint indexes in the order to try: those not backed off as configured, then the backed-off ones, soonest back first. */
  private order(): number[] {
    const now = (this.options.now ?? Date.now)();
    const indexes = this.endpoints.map((_, i) => i);
    const up = indexes.filter((i) => this.health[i].downUntil <= now);
    const down = indexes.filter((i) => this.health[i].downUntil > now);
    return [...up, ...down.sort((a, b) => this.health[a].downUntil - this.health[b].downUntil)];
  }

  private succeeded(i: number): void {
    if (this.health[i].failures === 0) return;
    this.health[i] = { failures: 0, downUntil: 0 };
    this.metrics.rpcUp.set({ chain: this.options.chain, rpc: this.endpoints[i].label }, 1);
    this.logger.info('chain RPC answers again', { chain: this.options.chain, rpc: this.endpoints[i].label });
  }

  private failed(i: number, what: string, err: unknown): void {
    const { backoffMs = 5000, maxBackoffMs = 300000, now = Date.now } = this.options;
    const failures = this.health[i].failures + 1;
    const wait = Math.min(backoffMs * 2 ** Math.min(failures - 1, 20), maxBackoffMs);
    this.health[i] = { failures, downUntil: now() + wait };
    const labels = { chain: this.options.chain, rpc: this.endpoints[i].label };
    this.metrics.rpcErrors.inc(labels);
    this.metrics.rpcUp.set(labels, 0);
    this.logger.warn('chain RPC failed; backing it off and trying the next', {
      ...labels,
      call: what,
      failures,
      backoff_ms: wait,
      error: rpcErrorMessage(err),
    });
  }

  /** Runs `fn` against the RPCs in turn until one answers; throws the last error when none does. */
  async call<T>(what: string, fn: (client: PublicClient) => Promise<T>): Promise<T> {
    let last: unknown;
    for (const i of this.order()) {
      try {
        const result = await fn(this.endpoints[i].client);
        this.succeeded(i);
        return result;
      } catch (err) {
        this.failed(i, what, err);
        last = err;
      }
    }
    throw last;
  }

  /**
   * The lowest of `quorum` RPCs' answers (failing over past those that error): a head or final block that
   * no single RPC can move forward, so none can make a block look final early. One RPC: `call`.
   */
  async lowest(what: string, fn: (client: PublicClient) => Promise<bigint>): Promise<bigint> {
    const { quorum } = this.options;
    if (quorum === 1) return this.call(what, fn);
    const answers: bigint[] = [];
    for (const i of this.order()) {
      if (answers.length === quorum) break;
      try {
        answers.push(await fn(this.endpoints[i].client));
        this.succeeded(i);
      } catch (err) {
        this.failed(i, what, err);
      }
    }
    if (answers.length < quorum)
      throw new QuorumUnavailable(`only ${answers.length} of the ${quorum} RPCs the quorum needs answered ${what}`);
    return answers.reduce((low, n) => (n < low ? n : low));
  }

  /**
   * Reads the hash of block `number` from `quorum` RPCs (failing over past RPCs that error). All equal to
   * `expectedHash`: agreed (with the block's timestamp). All equal to another hash: the block was reorganised. Otherwise (different
   * hashes, or an RPC without the block yet): disagreed, and nothing is decided. Fewer answers than the
   * quorum: QuorumUnavailable.
   */
  async verifyBlock(number: bigint, expectedHash: string): Promise<{ verdict: BlockVerdict; timestamp?: bigint }> {
    const { chain, quorum } = this.options;
    const answers: { rpc: string; hash: string | null; timestamp?: bigint }[] = [];
    for (const i of this.order()) {
      if (answers.length === quorum) break;
      try {
        const block = await this.endpoints[i].client.getBlock({ blockNumber: number }).catch((err: Error) => {
          if (err.name === 'BlockNotFoundError') return null;
          throw err;
        });
        this.succeeded(i);
        answers.push({ rpc: this.endpoints[i].label, hash: block?.hash ?? null, timestamp: block?.timestamp });
      } catch (err) {
        this.failed(i, 'eth_getBlockByNumber', err);
      }
    }
    if (answers.length < quorum)
      throw new QuorumUnavailable(`only ${answers.length} of the ${quorum} RPCs the quorum needs answered`);
    // the same hash is the same block, so the first answer's timestamp is every answer's
    if (answers.every((a) => a.hash === expectedHash)) return { verdict: 'agreed', timestamp: answers[0].timestamp };
    const first = answers[0].hash;
    if (first && answers.every((a) => a.hash === first)) return { verdict: 'reorged' };
    this.metrics.disagreements.inc({ chain });
    this.logger.warn('chain RPCs disagree on a block; deciding nothing until they agree', {
      chain,
      block_number: number.toString(),
      expected_hash: expectedHash,
      answers: answers.map((a) => `${a.rpc}=${a.hash ?? 'none'}`).join(' '),
    });
    return { verdict: 'disagreed' };
  }
}
