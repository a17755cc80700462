import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { getAddress, hashTypedData, hexToBytes, keccak256, recoverAddress, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  authorizationDigest,
  keccakImplementation,
  recoverSigner,
  signerRecovery,
} from '../src/x402/authorization-signer';
import { authorizationTypedData, type Authorization } from '../src/x402/x402-chain';

// verify's signature check is viem's recoverTypedDataAddress, done faster (authorization-signer.ts): these compare
// the two, answer for answer, on valid, malformed and malleated signatures; except a high s, which viem accepts
// and ours refuses (as USDC and OpenZeppelin's ECDSA do on chain)

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** Whether a 65-byte signature's s is over N / 2 (EIP-2's bound, the tokens' ECRecover's and OpenZeppelin's). */
const highS = (signature: Hex) => BigInt(`0x${signature.slice(66, 130)}`) > N / 2n;
const TOKEN = getAddress('0x79a02482a880bce3f13e09da970dc34db4cd24d1');
const DOMAIN = { name: 'Bridged USDC', version: '2', chainId: 480, token: TOKEN };

const hex32 = (n: bigint) => n.toString(16).padStart(64, '0');
const address = () => getAddress(toHex(randomBytes(20)));
const authorization = (over: Partial<Authorization> = {}): Authorization => ({
  from: address(),
  to: address(),
  value: '1000000',
  validAfter: '0',
  validBefore: '1900000000',
  nonce: toHex(randomBytes(32)),
  ...over,
});

/** What viem answers (the address, lower case) or that it throws; the same for ours. */
const viemSays = (digest: Uint8Array, signature: Hex) =>
  recoverAddress({ hash: digest, signature }).then(
    (a) => a.toLowerCase(),
    () => 'throws',
  );
const oursSays = (digest: Uint8Array, signature: Hex) =>
  recoverSigner(digest, signature).then(
    (a) => a,
    () => 'throws',
  );

const uint = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });

describe('the EIP-3009 authorization digest', () => {
  it('is viem hashTypedData’s for any authorization and domain', () => {
    fc.assert(
      fc.property(
        uint,
        uint,
        uint,
        fc.string(),
        fc.string(),
        fc.integer({ min: 1, max: 2 ** 40 }),
        (value, validAfter, validBefore, name, version, chainId) => {
          const typed = authorizationTypedData(
            { name, version, chainId, token: TOKEN },
            authorization({ value: `${value}`, validAfter: `${validAfter}`, validBefore: `${validBefore}` }),
          );
          expect(toHex(authorizationDigest(typed))).toBe(hashTypedData(typed));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('is refused as viem refuses it when a value is no uint256', () => {
    for (const field of ['value', 'validAfter', 'validBefore'] as const) {
      const typed = authorizationTypedData(DOMAIN, authorization({ [field]: `${1n << 256n}` }));
      expect(() => hashTypedData(typed)).toThrow();
      expect(() => authorizationDigest(typed)).toThrow(RangeError);
    }
    const largest = authorizationTypedData(DOMAIN, authorization({ value: `${(1n << 256n) - 1n}` }));
    expect(toHex(authorizationDigest(largest))).toBe(hashTypedData(largest));
  });

  it('changes with the domain (the cached separator is per chain, token, name and version)', () => {
    const a = authorization();
    const digests = new Set(
      [
        DOMAIN,
        { ...DOMAIN, name: 'USD Coin' },
        { ...DOMAIN, version: '1' },
        { ...DOMAIN, chainId: 8453 },
        { ...DOMAIN, token: address() },
      ].map((d) => {
        const typed = authorizationTypedData(d, a);
        const ours = toHex(authorizationDigest(typed));
        expect(ours).toBe(hashTypedData(typed));
        return ours;
      }),
    );
    expect(digests.size).toBe(5);
  });
});

describe('the signer of an authorization', () => {
  it('recovers with libsecp256k1 here (the prebuilt binding loads)', () => {
    expect(signerRecovery()).toBe('libsecp256k1');
  });

  it('is the payer for the payer’s own signature, and viem’s answer for every variant of it', async () => {
    for (let i = 0; i < 24; i++) {
      const payer = privateKeyToAccount(generatePrivateKey());
      const a = authorization({ from: payer.address });
      const typed = authorizationTypedData(DOMAIN, a);
      const signature = await payer.signTypedData(typed);
      const digest = authorizationDigest(typed);
      expect(await oursSays(digest, signature)).toBe(payer.address.toLowerCase());

      const r = BigInt(`0x${signature.slice(2, 66)}`);
      const s = BigInt(`0x${signature.slice(66, 130)}`);
      const v = Number.parseInt(signature.slice(130), 16);
      const sig = (rr: bigint, ss: bigint, vv: string) => `0x${hex32(rr)}${hex32(ss)}${vv}` as Hex;
      const variants: Hex[] = [
        sig(r, s, (v - 27).toString(16).padStart(2, '0')), // yParity 0/1 instead of 27/28
        sig(r, s, (v === 27 ? 28 : 27).toString(16)), // the other parity: another key
        sig(r, s, '02'),
        sig(r, s, '1d'),
        sig(r, s, 'ff'),
        sig(0n, s, v.toString(16)),
        sig(r, 0n, v.toString(16)),
        sig(N, s, v.toString(16)),
        sig(r, N, v.toString(16)),
        sig((1n << 256n) - 1n, s, v.toString(16)),
        `0x${signature.slice(2, 130)}` as Hex, // 64 bytes (EIP-2098 is not accepted, as by viem)
        `${signature}00` as Hex, // 66 bytes
        `${signature.slice(0, 130)}0${signature.slice(130)}` as Hex, // 66 bytes by its three digits of v
        `${signature.slice(0, 130)}1` as Hex, // an odd number of digits, read as viem reads it
        `${signature.slice(0, 130)}0` as Hex,
        signature.toUpperCase().replace('0X', '0x') as Hex,
      ];
      for (const variant of variants)
        expect([variant, await oursSays(digest, variant)]).toEqual([variant, await viemSays(digest, variant)]);
      // high s, parity flipped: the same key (ecrecover's malleability), which viem recovers and the token refuses
      const malleated = sig(r, N - s, (v === 27 ? 28 : 27).toString(16));
      expect(await viemSays(digest, malleated)).toBe(payer.address.toLowerCase());
      expect(await oursSays(digest, malleated)).toBe('throws');
      expect(await oursSays(digest, sig(r, N - s, v.toString(16)))).toBe('throws'); // high s, same parity
      // a digest of all ones (larger than the group order) and of zeros
      for (const other of [new Uint8Array(32).fill(0xff), new Uint8Array(32)])
        expect(await oursSays(other, signature)).toBe(await viemSays(other, signature));
    }
  });

  it('is viem’s answer for arbitrary 65-byte signatures, but refused for any high s', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 65, maxLength: 65 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        async (bytes, digest) => {
          bytes[64] = [0, 1, 27, 28][bytes[64] % 4];
          const signature = toHex(bytes);
          expect(await oursSays(digest, signature)).toBe(
            highS(signature) ? 'throws' : await viemSays(digest, signature),
          );
        },
      ),
      { numRuns: 100 },
    );
  });

  it('falls back to viem’s recovery where the binding does not load, with the same answers', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const typed = authorizationTypedData(DOMAIN, authorization({ from: payer.address }));
    const signature = await payer.signTypedData(typed);
    await jest.isolateModulesAsync(async () => {
      jest.doMock('secp256k1/bindings', () => {
        throw new Error('no prebuild for this platform');
      });
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh copy of the module, under the mock
      const fallback = require('../src/x402/authorization-signer') as typeof import('../src/x402/authorization-signer');
      expect(fallback.signerRecovery()).toBe('noble');
      const digest = fallback.authorizationDigest(typed);
      expect(await fallback.recoverSigner(digest, signature)).toBe(payer.address.toLowerCase());
      const bad = `0x${hex32(1n)}${hex32(2n)}1b` as Hex;
      expect(await fallback.recoverSigner(digest, bad).catch(() => 'throws')).toBe(await viemSays(digest, bad));
      // a high s: viem recovers the payer from it, the fallback refuses it as the native recovery does
      const s = BigInt(`0x${signature.slice(66, 130)}`);
      const v = Number.parseInt(signature.slice(130), 16);
      const malleated = `0x${signature.slice(2, 66)}${hex32(N - s)}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
      expect(await viemSays(digest, malleated)).toBe(payer.address.toLowerCase());
      await expect(fallback.recoverSigner(digest, malleated)).rejects.toThrow(/over half the group order/);
      expect(toHex(digest)).toBe(hashTypedData(typed));
      expect(hexToBytes(toHex(digest))).toEqual(digest);
    });
    jest.dontMock('secp256k1/bindings');
  });

  it('hashes with the keccak binding here, and with @noble/hashes where it does not load, to the same digests', async () => {
    expect(keccakImplementation()).toBe('native');
    const payer = privateKeyToAccount(generatePrivateKey());
    const typed = authorizationTypedData(DOMAIN, authorization({ from: payer.address }));
    const signature = await payer.signTypedData(typed);
    await jest.isolateModulesAsync(async () => {
      jest.doMock('node-gyp-build', () => {
        throw new Error('no prebuild for this platform');
      });
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh copy of the module, under the mock
      const fallback = require('../src/x402/authorization-signer') as typeof import('../src/x402/authorization-signer');
      expect(fallback.keccakImplementation()).toBe('noble');
      // secp256k1's binding loads through node-gyp-build too: here both run in JavaScript
      expect(fallback.signerRecovery()).toBe('noble');
      const digest = fallback.authorizationDigest(typed);
      expect(toHex(digest)).toBe(hashTypedData(typed));
      expect(toHex(digest)).toBe(toHex(authorizationDigest(typed)));
      expect(await fallback.recoverSigner(digest, signature)).toBe(payer.address.toLowerCase());
    });
    jest.dontMock('node-gyp-build');
    // the binding's answers are the same bytes (a Uint8Array of 32) as the JavaScript's
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 300 }), (bytes) => {
        const typedOf = authorizationTypedData(DOMAIN, authorization({ from: payer.address, nonce: keccak256(bytes) }));
        expect(toHex(authorizationDigest(typedOf))).toBe(hashTypedData(typedOf));
      }),
      { numRuns: 100 },
    );
  });
});
