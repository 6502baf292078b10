// The checks both validators run by the same code, so they cannot disagree and neither can be made to
// stall: `multipleOf` on the decimal values as written (19.99 is a multiple of 0.01, whatever binary
// floating point says) and `uniqueItems` by hashing each item's canonical JSON once (linear, where a
// pairwise comparison is quadratic in the number of items).

import { canonicalJson } from '@toolgate/core';

/** `value` as an integer coefficient and a power of ten, from its shortest decimal form. */
function decimal(value: number): readonly [bigint, number] {
  const [coefficient = '0', exponent = '0'] = Math.abs(value).toString().split('e');
  const point = coefficient.indexOf('.');
  const fraction = point === -1 ? 0 : coefficient.length - point - 1;
  return [BigInt(coefficient.replace('.', '')), Number(exponent) - fraction];
}

/** Whether `value` is an integer multiple of `divisor`, on the numbers' decimal forms. */
export function isMultipleOf(value: number, divisor: number): boolean {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false;
  const [a, aExp] = decimal(value);
  const [b, bExp] = decimal(divisor);
  const shift = aExp - bExp;
  return shift >= 0 ? (a * 10n ** BigInt(shift)) % b === 0n : a % (b * 10n ** BigInt(-shift)) === 0n;
}

/**
 * The first pair of equal items (JSON equality: key order never matters, 1 equals 1.0), as the index
 * of the earlier item and of the later one; undefined when every item is distinct.
 */
export function firstDuplicate(items: readonly unknown[]): readonly [number, number] | undefined {
  const seen = new Map<string, number>();
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    // A type letter keeps a string apart from the JSON text of anything else.
    const key =
      typeof item === 'string'
        ? `s${item}`
        : typeof item === 'object' && item !== null
          ? `j${canonicalJson(item)}`
          : `j${JSON.stringify(item) ?? 'null'}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) return [earlier, i];
    seen.set(key, i);
  }
  return undefined;
}

/** The words both validators use for a duplicate. */
export const duplicateItemsMessage = (earlier: number, later: number): string =>
  `must NOT have duplicate items (items ## ${earlier} and ${later} are identical)`;
