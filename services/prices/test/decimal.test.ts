import { multiply, parseDecimal, rescale, toDecimalString } from '../src/kernel/decimal';
import { plainDecimal } from '../src/feeds';

describe('exact decimal arithmetic', () => {
  it.each([
    ['1.510763', 1510763n, 6],
    ['1', 1000000n, 6],
    ['0.00000012345678', 12345678n, 14],
    ['3412.57', 3412570000n, 6],
    ['1.1000000', 1100000n, 6],
  ])('parses %s exactly', (text, amount, decimals) => {
    expect(parseDecimal(text)).toEqual({ amount, decimals });
  });

  it.each(['-1', '1e5', '1.2.3', '', 'abc', '0x10'])('refuses %p', (text) => {
    expect(parseDecimal(text)).toBeNull();
  });

  it('keeps digits binary floats lose', () => {
    // 0.1 + 0.2 in floats is 0.30000000000000004; here it is exact
    const sum = parseDecimal('0.1')!.amount + parseDecimal('0.2')!.amount;
    expect(toDecimalString({ amount: sum, decimals: 6 })).toBe('0.3');
    expect(parseDecimal('123456789012345678901234567890.123456')!.amount).toBe(123456789012345678901234567890123456n);
  });

  it('computes cross rates to the last digit, rounding half up', () => {
    const wldUsd = parseDecimal('1.510763')!;
    expect(multiply(wldUsd, parseDecimal('151.82')!, 6)).toEqual({ amount: 229364039n, decimals: 6 }); // 229.36403866
    expect(multiply(wldUsd, parseDecimal('0.9234')!, 6)).toEqual({ amount: 1395039n, decimals: 6 }); // 1.3950385542 → 1.395039
    expect(multiply(parseDecimal('2.5')!, parseDecimal('0.0000005')!, 6)).toEqual({ amount: 1n, decimals: 6 }); // 0.00000125 → 0.000001
    expect(multiply(parseDecimal('1.000001')!, parseDecimal('15702')!, 6)).toEqual({
      amount: 15702015702n,
      decimals: 6,
    });
    expect(rescale({ amount: 1234565n, decimals: 7 }, 6)).toEqual({ amount: 123457n, decimals: 6 });
  });

  it('writes exponent-form JSON numbers as plain decimals', () => {
    expect(plainDecimal('1e-7')).toBe('0.0000001');
    expect(plainDecimal('1.5E3')).toBe('1500');
    expect(plainDecimal('2.25')).toBe('2.25');
  });
});
