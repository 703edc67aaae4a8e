import { describe, expect, it } from 'vitest';
import { dollarsToMicros, formatMicros, formatPricePerMtok, microsToDollars, parseDollars } from './money';

describe('dollars → micro-dollars', () => {
  it.each([
    ['0.1', 100_000],
    ['2.5', 2_500_000],
    ['0.15', 150_000],
    ['0.3', 300_000],
    ['1.1', 1_100_000],
    ['0.000001', 1],
    ['10', 10_000_000],
    ['.5', 500_000],
    ['3.', 3_000_000],
    [' $0.07 ', 70_000],
    ['1,000', 1_000_000_000],
    ['0', 0],
  ])('%s → %i', (input, micros) => {
    expect(dollarsToMicros(input)).toBe(micros);
  });

  it('empty means no price', () => {
    expect(dollarsToMicros('')).toBeNull();
    expect(dollarsToMicros('   ')).toBeNull();
  });

  it('has no float drift where naive multiplication has', () => {
    // 0.07 * 1e6 is 70000.00000000001 and 1.005 * 1e6 is 1004999.9999999999 in floats.
    expect(dollarsToMicros('0.07')).toBe(70_000);
    expect(dollarsToMicros('1.005')).toBe(1_005_000);
    for (let cents = 0; cents <= 10_000; cents += 7) {
      const s = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
      expect(dollarsToMicros(s)).toBe(cents * 10_000);
    }
  });

  it.each(['abc', '-1', '1.2.3', '.', '1e3', '0.0000001'])('refuses %s', (input) => {
    const parsed = parseDollars(input);
    expect(parsed.ok).toBe(false);
  });
});

describe('micro-dollars → dollars', () => {
  it.each([
    [100_000, '0.1'],
    [2_500_000, '2.5'],
    [150_000, '0.15'],
    [1, '0.000001'],
    [10_000_000, '10'],
    [0, '0'],
  ])('%i → %s', (micros, text) => {
    expect(microsToDollars(micros)).toBe(text);
    expect(dollarsToMicros(text)).toBe(micros);
  });

  it('null is an empty field', () => {
    expect(microsToDollars(null)).toBe('');
  });

  it('formats for display with at least two decimals', () => {
    expect(formatMicros(150_000)).toBe('$0.15');
    expect(formatMicros(2_500_000)).toBe('$2.50');
    expect(formatMicros(75_000)).toBe('$0.075');
    expect(formatMicros(1_234_500_000)).toBe('$1,234.50');
    expect(formatMicros(0)).toBe('$0.00');
    expect(formatPricePerMtok(null)).toBe('—');
    expect(formatPricePerMtok(10_000_000)).toBe('$10.00');
  });
});
