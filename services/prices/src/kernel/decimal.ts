/** Exact fixed-point numbers as (integer amount, decimals): value = amount × 10^-decimals. No binary floats. */
export interface Fixed {
  amount: bigint;
  decimals: number;
}

export const MIN_DECIMALS = 6;
export const MAX_DECIMALS = 18;

const DECIMAL = /^(\d{1,40})(?:\.(\d{1,36}))?$/;

/** "1.510763" → {1510763n, 6}; at least 6 decimals (SPEC's unit), more when the input has them (up to 18). */
export function parseDecimal(text: string): Fixed | null {
  const m = DECIMAL.exec(text.trim());
  if (!m) return null;
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  if (fraction.length > MAX_DECIMALS)
    return rescale({ amount: BigInt(m[1] + fraction), decimals: fraction.length }, MAX_DECIMALS);
  const decimals = Math.max(MIN_DECIMALS, fraction.length);
  return { amount: BigInt(m[1] + fraction.padEnd(decimals, '0')), decimals };
}

/** Changes the number of decimals, rounding half up when digits are dropped. */
export function rescale(value: Fixed, decimals: number): Fixed {
  if (decimals >= value.decimals) return { amount: value.amount * 10n ** BigInt(decimals - value.decimals), decimals };
  const divisor = 10n ** BigInt(value.decimals - decimals);
  return { amount: (value.amount + divisor / 2n) / divisor, decimals };
}

/** a × b, exact, then rounded half up to `decimals`. */
export function multiply(a: Fixed, b: Fixed, decimals: number): Fixed {
  return rescale({ amount: a.amount * b.amount, decimals: a.decimals + b.decimals }, decimals);
}

export function toDecimalString(value: Fixed): string {
  const digits = value.amount.toString().padStart(value.decimals + 1, '0');
  if (value.decimals === 0) return digits;
  return `${digits.slice(0, -value.decimals)}.${digits.slice(-value.decimals)}`.replace(/\.?0+$/, '');
}
