import { describe, expect, it } from 'vitest';
import { asRubric, evenWeights, newCriterion, scaleText, weightsBalanced, weightSum, type Criterion } from './rubric';

const c = (weight: number | string): Criterion => ({ ...newCriterion(), weight });

describe('rubric weights', () => {
  it('sums the numeric weights without float noise', () => {
    expect(weightSum([c(0.1), c(0.2), c(0.7)])).toBe(1);
    expect(weightSum([c(0.7), c(0.5)])).toBe(1.2);
    expect(weightSum([c(0.5), c('abc')])).toBe(0.5);
  });

  it('is balanced within the server tolerance of 0.01 only', () => {
    expect(weightsBalanced([c(0.5), c(0.5)])).toBe(true);
    expect(weightsBalanced([c(0.33), c(0.33), c(0.33)])).toBe(true); // 0.99
    expect(weightsBalanced([c(0.33), c(0.33), c(0.32)])).toBe(false); // 0.98
    expect(weightsBalanced([c(0.6), c(0.5)])).toBe(false);
    expect(weightsBalanced([c(1), c('')])).toBe(false); // a weight not yet a number
  });

  it('splits weights evenly to exactly 1', () => {
    for (const n of [2, 3, 6, 7, 10]) {
      const split = evenWeights(Array.from({ length: n }, () => c(0)));
      expect(weightSum(split)).toBe(1);
      expect(weightsBalanced(split)).toBe(true);
    }
  });

  it('reads stored rubrics, including object scales', () => {
    const scale = { min: 0, max: 10, labels: { '0': 'wrong', '10': 'perfect' } };
    const read = asRubric({ criteria: [{ name: 'A', description: 'd', weight: 1, scale }], goal: 'g' });
    expect(read).toEqual({ criteria: [{ name: 'A', description: 'd', weight: 1, scale }], goal: 'g' }); // labels kept
    expect(scaleText(read!.criteria[0].scale)).toBe('0-10');
    expect(asRubric('nope')).toBeNull();
  });
});
