import { describe, expect, it } from 'vitest';
import { formatRate, sentOf, skippedWhy, successBasis, successRate } from './rates';

describe('the rates, defined once', () => {
  it('counts the success rate over the calls sent, never over cells never sent', () => {
    const cancelled = { succeeded: 23, failed: 0, skipped: 137 };
    expect(sentOf(cancelled)).toBe(23);
    expect(successRate(cancelled)).toBe(1);
    expect(successBasis(cancelled, skippedWhy('cancelled'))).toBe('23 of 23 calls sent · 137 never sent (cancelled)');
    expect(successRate({ succeeded: 0, failed: 0 })).toBeNull();
    expect(formatRate(successRate({ succeeded: 1, failed: 11 }))).toBe('8.3%');
  });

  it('names why cells were skipped only when the status says so', () => {
    expect(skippedWhy('budget_exceeded')).toBe('budget reached');
    expect(skippedWhy('partial')).toBeUndefined();
    expect(successBasis({ succeeded: 1, failed: 0 })).toBe('1 of 1 call sent');
  });
});
