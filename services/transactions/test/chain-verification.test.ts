import { loadTransactionsConfig } from '../src/config';
import {
  DEFAULT_CHAIN_TOKENS,
  parseChainTokens,
  representable,
  sameAmount,
  type TokenConfig,
} from '../src/kernel/chain-tokens';
import { lastFinalBlock, TRANSFER_TOPIC, verifyTransfer, type ChainLog } from '../src/chain/verify-transfer';
import { differingField } from '../src/transactions/transaction-rules';

const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);
const C = '0x' + 'c'.repeat(40);
const TOKEN = '0x' + '1'.repeat(40);
const OTHER_TOKEN = '0x' + '2'.repeat(40);
const erc20: TokenConfig = { kind: 'erc20', address: TOKEN as `0x${string}`, decimals: 18 };
const native: TokenConfig = { kind: 'native', decimals: 18 };

const topic = (address: string) => `0x${'0'.repeat(24)}${address.slice(2)}`;
const transferLog = (contract: string, from: string, to: string, value: bigint): ChainLog => ({
  address: contract,
  topics: [TRANSFER_TOPIC, topic(from), topic(to)],
  data: `0x${value.toString(16).padStart(64, '0')}`,
});
const recorded = { from: A, to: B, token: 'WLD', tokenAmount: '1500000' };
const WEI_1_5 = 1_500_000_000_000_000_000n;
const reasonOf = (token: TokenConfig | undefined, observed: Parameters<typeof verifyTransfer>[2], r = recorded) =>
  verifyTransfer(r, token, observed)?.code ?? null;

describe('verifyTransfer', () => {
  it('accepts an exact ERC-20 transfer, converting 6 decimals to the token’s own, among other logs and in any address case', () => {
    const logs = [
      transferLog(OTHER_TOKEN, A, C, 5n),
      transferLog(TOKEN.toUpperCase().replace('0X', '0x'), A, B, WEI_1_5),
    ];
    expect(reasonOf(erc20, { status: 'success', logs })).toBeNull();
    expect(
      reasonOf(erc20, { status: 'success', logs }, { ...recorded, from: A.toUpperCase().replace('0X', '0x') }),
    ).toBeNull();
  });

  it.each([
    ['an underpayment', [transferLog(TOKEN, A, B, WEI_1_5 - 1n)], 'wrong_amount'],
    ['an overpayment', [transferLog(TOKEN, A, B, WEI_1_5 + 1n)], 'wrong_amount'],
    ['another recipient', [transferLog(TOKEN, A, C, WEI_1_5)], 'wrong_recipient'],
    ['another sender', [transferLog(TOKEN, C, B, WEI_1_5)], 'wrong_sender'],
    ['unrelated parties', [transferLog(TOKEN, C, C, WEI_1_5)], 'wrong_recipient'],
    ['another token contract', [transferLog(OTHER_TOKEN, A, B, WEI_1_5)], 'wrong_token'],
    ['no transfer at all', [], 'wrong_token'],
    ['a log with the topic but no value', [{ ...transferLog(TOKEN, A, B, WEI_1_5), data: '0x' }], 'wrong_token'],
  ])('fails %s', (_what, logs, reason) => {
    expect(reasonOf(erc20, { status: 'success', logs })).toBe(reason);
  });

  it('fails a reverted receipt, and a token with no configured contract, before looking at transfers', () => {
    expect(reasonOf(erc20, { status: 'reverted', logs: [transferLog(TOKEN, A, B, WEI_1_5)] })).toBe('reverted');
    expect(reasonOf(undefined, { status: 'success', logs: [transferLog(TOKEN, A, B, WEI_1_5)] })).toBe('unknown_token');
  });

  it('checks a native payment from the transaction itself', () => {
    const tx = (from: string, to: string | null, value: bigint) => ({
      status: 'success' as const,
      logs: [],
      transaction: { from, to, value },
    });
    expect(reasonOf(native, tx(A, B, WEI_1_5))).toBeNull();
    expect(reasonOf(native, tx(A, B, WEI_1_5 - 1n))).toBe('wrong_amount');
    expect(reasonOf(native, tx(A, C, WEI_1_5))).toBe('wrong_recipient');
    expect(reasonOf(native, tx(A, null, WEI_1_5))).toBe('wrong_recipient');
    expect(reasonOf(native, tx(C, B, WEI_1_5))).toBe('wrong_sender');
    expect(
      reasonOf(native, {
        status: 'success',
        logs: [transferLog(TOKEN, A, B, WEI_1_5)],
        transaction: { from: A, to: TOKEN, value: 0n },
      }),
    ).toBe('wrong_token');
  });
});

describe('amounts with 6 decimals against a token’s own', () => {
  it('compare exactly, for more, as many and fewer decimals', () => {
    expect(sameAmount(1_500_000n, WEI_1_5, 18)).toBe(true);
    expect(sameAmount(1_500_000n, WEI_1_5 + 1n, 18)).toBe(false);
    expect(sameAmount(1_500_000n, 1_500_000n, 6)).toBe(true);
    expect(sameAmount(1_500_000n, 150n, 2)).toBe(true);
    expect(sameAmount(1_505_000n, 150n, 2)).toBe(false);
    expect(sameAmount(0n, 0n, 0)).toBe(true);
  });

  it('are representable in a token with fewer decimals only without finer digits', () => {
    expect(representable(1_510_000n, 2)).toBe(true);
    expect(representable(1_515_000n, 2)).toBe(false);
    expect(representable(1n, 6)).toBe(true);
    expect(representable(1n, 18)).toBe(true);
  });
});

describe('finality', () => {
  it('a number of confirmations counts the receipt’s block as the first', () => {
    expect(lastFinalBlock(1, 100n)).toBe(100n);
    expect(lastFinalBlock(3, 100n)).toBe(98n);
  });
  it('a tag takes the node’s tagged block', () => {
    expect(lastFinalBlock('safe', 100n, 90n)).toBe(90n);
    expect(() => lastFinalBlock('finalized', 100n)).toThrow('the finalized block is needed');
  });
});

describe('CHAIN_TOKENS', () => {
  it('parses contracts and native tokens, checksumming addresses; the default knows World Chain', () => {
    expect(parseChainTokens(`{"local":{"TST":{"address":"${TOKEN}","decimals":2},"ETH":{"native":true}}}`)).toEqual({
      local: { TST: { kind: 'erc20', address: TOKEN, decimals: 2 }, ETH: { kind: 'native', decimals: 18 } },
    });
    expect(Object.keys(DEFAULT_CHAIN_TOKENS.worldchain)).toEqual(['USDCE', 'WLD', 'ETH']);
    expect(DEFAULT_CHAIN_TOKENS.worldchain.USDCE).toEqual({
      kind: 'erc20',
      address: '0x79A02482A880bCE3F13e09Da970dC34db4CD24d1',
      decimals: 6,
    });
  });

  it.each([
    ['nope', 'must be JSON'],
    ['[]', 'must be a JSON object of chain names'],
    ['{"World":{"X":{"native":true}}}', 'has a chain name that is not lowercase letters, digits and -: World'],
    ['{"w":{}}', 'w must be an object of token codes'],
    ['{"w":{"usdc":{"native":true}}}', 'w has a token code that is not 2 to 12 upper-case letters or digits: usdc'],
    ['{"w":{"USDC":{"address":"0x12","decimals":6}}}', 'w.USDC.address must be 0x followed by 40 hexadecimal digits'],
    [`{"w":{"USDC":{"address":"${TOKEN}"}}}`, 'w.USDC.decimals must be an integer from 0 to 36'],
    [`{"w":{"USDC":{"address":"${TOKEN}","decimals":6,"symbol":"x"}}}`, 'w.USDC has an unknown field symbol'],
    [`{"w":{"ETH":{"native":true,"address":"${TOKEN}"}}}`, 'w.ETH is native and must have no address'],
  ])('refuses %s: %s', (json, problem) => {
    expect(parseChainTokens(json)).toBe(problem);
  });
});

describe('a repeated record', () => {
  const stored = {
    appId: 'app_1',
    type: 'pay' as const,
    reference: 'r',
    transactionHash: '0xab',
    status: 'pending' as const,
    from: A,
    to: B,
    chain: 'worldchain',
    token: 'USDCE',
    tokenAmount: '15',
  };
  it('is the same whatever the case of addresses, hash and token, and leading zeros of the amount', () => {
    expect(
      differingField(stored, {
        ...stored,
        from: A.toUpperCase().replace('0X', '0x'),
        transactionHash: '0xAB',
        token: 'usdce',
        tokenAmount: '015',
      }),
    ).toBeNull();
  });
  it('names the first field that differs', () => {
    expect(differingField(stored, { ...stored, tokenAmount: '16' })).toBe('token_amount');
    expect(differingField(stored, { ...stored, to: C, chain: 'base' })).toBe('chain');
    expect(differingField(stored, { ...stored, transactionHash: null })).toBe('transaction_hash');
  });
});

describe('chain settings in the environment', () => {
  const load = (env: Record<string, string>) =>
    loadTransactionsConfig({ DATA_DIR: '/nonexistent-attest-test', API_KEY_SECRET: 'x'.repeat(32), ...env });

  it('CHAIN_FINALITY takes a number of confirmations, safe or finalized; CHAIN_CONFIRMATIONS is its older name; safe by default', () => {
    expect(load({}).chainFinality).toBe('safe');
    expect(load({ CHAIN_FINALITY: '12' }).chainFinality).toBe(12);
    expect(load({ CHAIN_FINALITY: 'finalized' }).chainFinality).toBe('finalized');
    expect(load({ CHAIN_CONFIRMATIONS: '3' }).chainFinality).toBe(3);
    expect(load({ CHAIN_CONFIRMATIONS: '3', CHAIN_FINALITY: 'safe' }).chainFinality).toBe('safe');
  });

  it('CHAIN_RPC_URL takes one URL or several separated by commas, tried in that order; the quorum is 1 by default', () => {
    const one = load({ CHAIN_RPC_URL: 'https://rpc.example.org/v2/key' });
    expect(one.chainRpcUrls).toEqual(['https://rpc.example.org/v2/key']);
    expect(one.CHAIN_RPC_QUORUM).toBe(1);
    expect(one.CHAIN_MAX_LAG_BLOCKS).toBe(100);
    expect(one.CHAIN_SCAN_BLOCKS).toBe(100);
    const several = load({
      CHAIN_RPC_URL: 'https://a.example.org, wss://b.example.org/ws,http://127.0.0.1:8545',
      CHAIN_RPC_QUORUM: '3',
    });
    expect(several.chainRpcUrls).toEqual(['https://a.example.org', 'wss://b.example.org/ws', 'http://127.0.0.1:8545']);
    expect(several.CHAIN_RPC_QUORUM).toBe(3);
    expect(load({}).chainRpcUrls).toEqual([]);
  });

  it('never repeats an RPC URL in a refusal (it may carry an API key)', () => {
    expect(() => load({ CHAIN_RPC_URL: 'https://a.example.org/secret-key,not a url' })).toThrow(
      'Invalid environment: CHAIN_RPC_URL must be a URL or URLs separated by commas (entry 2 is not a URL)',
    );
    expect(() => load({ CHAIN_RPC_URL: 'https://a.example.org/secret-key,not a url' })).not.toThrow(/secret-key/);
  });

  it.each([
    [
      { CHAIN_RPC_URL: 'https://a.example.org,ftp://b.example.org' },
      'CHAIN_RPC_URL must hold http, https, ws or wss URLs (got ftp)',
    ],
    [{ CHAIN_RPC_URL: 'https://a.example.org,https://a.example.org' }, 'CHAIN_RPC_URL names the same URL twice'],
    [
      { CHAIN_RPC_URL: 'https://a.example.org,https://b.example.org', CHAIN_RPC_QUORUM: '3' },
      'CHAIN_RPC_QUORUM is 3 but CHAIN_RPC_URL names 2 RPC URL(s); the quorum can be at most their number',
    ],
    [{ CHAIN_RPC_QUORUM: '0' }, 'CHAIN_RPC_QUORUM must be greater than or equal to 1'],
    [
      { CHAIN_FINALITY: 'soon' },
      'CHAIN_FINALITY must be a number of confirmations (1 to 1000), safe or finalized (got soon)',
    ],
    [
      { CHAIN_FINALITY: '0' },
      'CHAIN_FINALITY must be a number of confirmations (1 to 1000), safe or finalized (got 0)',
    ],
    [
      { CHAIN_TOKENS: '{"w":{"usdc":{"native":true}}}' },
      'CHAIN_TOKENS w has a token code that is not 2 to 12 upper-case letters or digits: usdc',
    ],
    [
      { CHAIN_RPC_URL: 'http://127.0.0.1:8545', CHAIN_NAME: 'base' },
      'CHAIN_TOKENS has no tokens for CHAIN_NAME base, so the watcher could verify no payment',
    ],
  ])('refuses %p naming the variable', (env, message) => {
    expect(() => load(env)).toThrow(`Invalid environment: ${message}`);
  });
});
