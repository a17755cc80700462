import fc from 'fast-check';
import { getAddress, isAddress } from 'viem';
import { checksumAddress, isValidAddress } from '../src/kernel/address';

const hexDigits = fc.array(fc.constantFrom(...'0123456789abcdefABCDEF'), { minLength: 40, maxLength: 40 });
const anyCase = hexDigits.map((d) => `0x${d.join('')}`);

describe('EIP-55 addresses without viem (viem is loaded only by the chain watcher)', () => {
  it('checksums as the EIP-55 test vectors and as viem do', () => {
    // test vectors of EIP-55 itself
    for (const vector of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ]) {
      expect(checksumAddress(vector.toLowerCase())).toBe(vector);
      expect(checksumAddress(vector.toUpperCase().replace('0X', '0x'))).toBe(vector);
    }
    fc.assert(fc.property(anyCase, (address) => checksumAddress(address) === getAddress(address.toLowerCase())));
  });

  it('accepts lower case or a valid checksum, exactly as viem isAddress(…, { strict: true })', () => {
    const checksummed = anyCase.map((a) => getAddress(a.toLowerCase()));
    fc.assert(fc.property(fc.oneof(anyCase, checksummed), (address) => isValidAddress(address) === isAddress(address)));
    expect(isValidAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toBe(true);
    expect(isValidAddress('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed')).toBe(true);
    // one letter's case flipped breaks the checksum
    expect(isValidAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')).toBe(false);
    // all upper case is not lower case and is no valid checksum
    expect(isValidAddress('0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED')).toBe(false);
    for (const bad of ['', '0x', '0x123', `0X${'a'.repeat(40)}`, `0x${'g'.repeat(40)}`, `0x${'a'.repeat(41)}`]) {
      expect(isValidAddress(bad)).toBe(false);
      expect(isAddress(bad)).toBe(false);
    }
    expect(() => checksumAddress('0x123')).toThrow('not an address');
  });
});
