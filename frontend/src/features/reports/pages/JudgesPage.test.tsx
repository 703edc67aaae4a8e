import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderProject } from '@/test/project';
import type { JudgeCalibration } from '../api';
import { serveReports } from '../testFixtures';

const alpha = (a: number | null, units = 4) => ({ alpha: a, level: 'interval', n_judges: 2, n_units: units, n_values: units * 2, observed_disagreement: 0.1, expected_disagreement: 0.4 });
const kappa = (k: number | null, n = 4) => ({ kappa: k, n, dropped: 0, observed_agreement: 0.75, expected_agreement: 0.5, weights: null });

const calibration = (): JudgeCalibration => ({
  items: [
    {
      scorer_id: 6,
      name: 'Helpful',
      kind: 'llm_judge',
      scorer_version_id: 61,
      version: 2,
      runs: 2,
      outputs: 4,
      judges: ['judge-a', 'judge-b'],
      agreement: { raters: [], alpha: alpha(0.7143), kappa: kappa(0.5) },
      judge_human: [
        { judge: 'judge-a', human_scorer_version_id: 71, human_name: 'By hand', human_version: 1, reviewers: 1, n: 3, judge_only: 1, human_only: 0, exact_agreement: 1 / 3, mean_abs_difference: 0.0833, alpha: alpha(0.9), kappa: { ...kappa(0.8, 3), weights: 'quadratic' } },
        { judge: null, human_scorer_version_id: 71, human_name: 'By hand', human_version: 1, reviewers: 1, n: 3, judge_only: 1, human_only: 0, exact_agreement: 0, mean_abs_difference: 0.1, alpha: alpha(null), kappa: { ...kappa(null, 3), weights: 'quadratic' } },
      ],
    },
    { scorer_id: 8, name: 'Solo', kind: 'llm_judge', scorer_version_id: 81, version: 1, runs: 1, outputs: 2, judges: ['judge-a'], agreement: null, judge_human: [] },
  ],
});

describe('JudgesPage', () => {
  it('shows each judge version’s agreement with other judges and with people', async () => {
    serveReports({ '/api/projects/3/reports/judge-calibration': calibration() });
    renderProject('/projects/3/reports/judges');
    const helpful = within(await screen.findByRole('region', { name: 'Helpful v2 (llm_judge)' }));
    expect(helpful.getByText('4 outputs scored across 2 runs by judge-a, judge-b.')).toBeInTheDocument();
    expect(helpful.getByText(/α = 0\.714 over 4 outputs rated at least twice; Cohen’s κ on their verdicts = 0\.500 over 4 outputs/)).toBeInTheDocument();
    const rows = within(helpful.getByRole('table', { name: 'Helpful v2 against people' })).getAllByRole('row').slice(1);
    expect(rows.map((r) => Array.from(r.children).map((c) => c.textContent))).toEqual([
      ['judge-a', 'By hand v1 · 1 reviewer', '3', '33.3%', '0.083', '0.900', '0.800'],
      ['Mean of the judges', 'By hand v1 · 1 reviewer', '3', '0.0%', '0.100', '—', '—'],
    ]);
    const solo = within(screen.getByRole('region', { name: 'Solo v1 (llm_judge)' }));
    expect(solo.getByText('One judge: no agreement between judges to measure.')).toBeInTheDocument();
    expect(solo.getByText(/No person has scored these outputs/)).toBeInTheDocument();
  });

  it('says what to do when no judge has scored anything', async () => {
    serveReports({ '/api/projects/3/reports/judge-calibration': { items: [] } });
    renderProject('/projects/3/reports/judges');
    expect(await screen.findByText('No judge scores yet')).toBeInTheDocument();
  });
});
