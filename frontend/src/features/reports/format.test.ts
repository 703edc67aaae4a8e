import { describe, expect, it } from 'vitest';
import { percentChange, pct, signed } from './format';

describe('percentChange', () => {
  it('prints the API’s percent as it is: 0.559 → 0.654 is +17.0%, not +1699.5%', () => {
    const percentage = ((0.654 - 0.559) * 100) / 0.559; // what the dashboard returns
    expect(percentChange(percentage)).toBe('+17.0%');
    expect(percentChange(16.9)).toBe('+16.9%');
  });

  it('signs a fall with a true minus and no change with ±', () => {
    expect(percentChange(-12.34)).toBe('−12.3%');
    expect(percentChange(0)).toBe('±0.0%');
    expect(percentChange(null)).toBe('—');
  });

  it('keeps fractions for rates and percent for changes apart', () => {
    expect(pct(0.169)).toBe('16.9%');
    expect(signed(0.095)).toBe('+0.095');
  });
});
