import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { caseOutput, score } from '../testFixtures';
import { OutputCard } from './OutputCard';

describe('OutputCard scores', () => {
  it('shows a manual 4/5 as 4/5 (not its stored 0.75), and each criterion rating on its scale', () => {
    const rated = score({ kind: 'manual', source: 'user:1', value: 0.75, passed: null, details: { entered: { rating: 4, passed: null, criteria: {} } } });
    const perCriterion = score({
      scorer_name: 'Tone',
      kind: 'manual',
      source: 'user:1',
      value: 0.625,
      passed: null,
      criteria: { clarity: 0.75, warmth: 0.5 },
      details: { entered: { rating: null, passed: null, criteria: { clarity: 4, warmth: 3 } } },
    });
    const judge = score({ scorer_name: 'Judge', kind: 'llm_judge', value: 0.75 });
    render(<OutputCard output={caseOutput({ scores: [rated, perCriterion, judge] })} label="Fast" />);
    expect(screen.getByLabelText('score 4/5')).toBeInTheDocument();
    expect(screen.getByLabelText('score 3.5/5')).toBeInTheDocument();
    expect(screen.getByText('clarity 4/5 · warmth 3/5')).toBeInTheDocument();
    expect(screen.getByLabelText('score 0.75')).toBeInTheDocument(); // a judge's own scale is 0–1
  });
});
