import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Abi, Hex } from 'viem';

/**
 * The x402 tests' EIP-3009 token (fixtures/Eip3009Token.sol: OpenZeppelin 5 ERC20 + EIP712 + SignatureChecker) and
 * an ERC-1271 contract wallet, compiled here with npm `solc` from their source: nothing compiled is committed. The
 * output is kept in the OS temporary directory under a hash of the source, the compiler's and OpenZeppelin's
 * versions and the settings, so a second run skips the compiler, and any change compiles again.
 * evmVersion 'paris' because ganache 7 does not run PUSH0 (shanghai) nor MCOPY (cancun); OpenZeppelin is pinned to
 * 5.0.2 because later 5.x releases use MCOPY in SignatureChecker.
 */
export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
}

export interface Eip3009Artifacts {
  token: CompiledContract;
  wallet: CompiledContract;
}

const SOURCE = path.join(__dirname, '..', 'fixtures', 'Eip3009Token.sol');
const SETTINGS = {
  evmVersion: 'paris',
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
};

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
}

const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));
const packageVersion = (name: string) =>
  (JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8')) as { version: string }).version;

export function compileEip3009Token(): Eip3009Artifacts {
  const source = fs.readFileSync(SOURCE, 'utf8');
  const key = createHash('sha256')
    .update(JSON.stringify([source, packageVersion('solc'), packageVersion('@openzeppelin/contracts'), SETTINGS]))
    .digest('hex')
    .slice(0, 32);
  const cache = path.join(os.tmpdir(), `attest-eip3009-token-${key}.json`);
  if (fs.existsSync(cache)) return JSON.parse(fs.readFileSync(cache, 'utf8')) as Eip3009Artifacts;

  // eslint-disable-next-line @typescript-eslint/no-require-imports -- solc ships no ES module; loaded only on a cache miss
  const solc = require('solc') as { compile(input: string, options: unknown): string };
  const openzeppelin = path.dirname(packageDir('@openzeppelin/contracts'));
  const findImports = (file: string) =>
    file.startsWith('@openzeppelin/')
      ? { contents: fs.readFileSync(path.join(openzeppelin, '..', file), 'utf8') }
      : { error: `not found: ${file}` };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'Eip3009Token.sol': { content: source } },
        settings: SETTINGS,
      }),
      { import: findImports },
    ),
  ) as SolcOutput;
  const failures = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (failures.length > 0) throw new Error(failures.map((e) => e.formattedMessage).join('\n'));
  const contract = (name: string): CompiledContract => {
    const compiled = output.contracts['Eip3009Token.sol'][name];
    return { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` };
  };
  const artifacts = { token: contract('Eip3009Token'), wallet: contract('OwnerWallet') };
  const partial = `${cache}.${process.pid}`;
  fs.writeFileSync(partial, JSON.stringify(artifacts));
  fs.renameSync(partial, cache);
  return artifacts;
}
