import { describe, expect, it } from 'vitest';
import { heat, winMatrix } from './analysis';
import { comparisons } from './testFixtures';

/** WCAG relative luminance contrast of two #rrggbb colours. */
function contrast(a: string, b: string) {
  const lum = (hex: string) => {
    const [r, g, bl] = [1, 3, 5].map((i) => {
      const c = parseInt(hex.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}

describe('winMatrix', () => {
  it('pools judges, counts ties and split verdicts half, and mirrors the pair', () => {
    const pair = comparisons().pairs[0]!;
    const m = winMatrix([pair, { ...pair, judge: 'fake-b', a_wins: 0, b_wins: 4, ties: 0, disagreements: 0, errors: 3 }]);
    expect(m.targets.map((t) => t.label)).toEqual(['Fake Smart', 'Fake Fast']);
    // Smart: 6 wins, 6 losses, 2 draws of 14 -> (6 + 1) / 14
    expect(m.cell(1, 2)).toEqual({ wins: 6, losses: 6, draws: 2, games: 14, rate: 0.5 });
    expect(m.cell(2, 1).rate).toBeCloseTo(0.5);
    expect(m.cell(1, 1)).toMatchObject({ games: 0, rate: null });
  });
});

describe('heat', () => {
  it('keeps text readable (4.5:1) on every step', () => {
    for (let v = 0; v <= 1; v += 0.05) {
      const { background, color } = heat(v, 0, 1);
      expect(contrast(background, color)).toBeGreaterThanOrEqual(4.5);
    }
    expect(heat(null, 0, 1).background).toBe('#f4f4f5');
  });
});
