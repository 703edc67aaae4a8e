import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import type { TargetComparison } from '../api';
import { comparisons, dashboard, facets, runsPage, serveReports, statistics } from '../testFixtures';

const RUN = '/api/projects/3/runs/77';
const compare = (verdict: string, diff: number, p: number): TargetComparison =>
  ({
    run_id: 77,
    target_a: { target_id: 1, label: 'Fake Smart', model_id: 1 },
    target_b: { target_id: 2, label: 'Fake Fast', model_id: 2 },
    comparison: { n: 2, mean_difference: diff, low: -0.5, high: 0.1, p_value: p, verdict },
  }) as TargetComparison;

function flaky() {
  const s = statistics();
  s.items[1]!.flakiness = {
    n_cases: 3,
    n_flaky: 1,
    flaky_share: { k: 1, n: 3, estimate: 1 / 3, low: 0.0615, high: 0.7923, confidence: 0.95 },
    mean_std: 0.2,
    binary: true,
    cases: [{ case_id: 4141, case_number: 7, repeats: 3, mean: 0.6667, std: 0.4714, spread: 1, passes: 2 }],
  };
  return s;
}

function serve(over: Record<string, unknown> = {}) {
  return serveReports({
    '/api/projects/3/runs': runsPage(),
    [RUN]: { id: 77, spent_micros: 24_300, judge_spent_micros: 19_800 },
    [`${RUN}/statistics`]: flaky(),
    [`${RUN}/statistics/facets`]: facets(),
    [`${RUN}/comparisons/summary`]: comparisons(),
    '/api/projects/3/reports/runs/77/dashboard': dashboard(),
    [`${RUN}/compare-targets`]: compare('not distinguishable', -0.2, 0.5),
    ...over,
  });
}

describe('RunInsights on the run report', () => {
  it('shows the headline as the API computes it, with the run’s spend', async () => {
    const fetch = serve();
    renderProject('/projects/3/reports/runs');
    const head = within(await screen.findByLabelText('Run headline'));
    expect(head.getByText('Headline score · Judge').nextSibling).toHaveTextContent('0.600');
    expect(head.getByText('95% interval [0.450, 0.750] · 3 cases')).toBeInTheDocument();
    expect(head.getByText('Change vs previous run').nextSibling).toHaveTextContent('+0.100');
    expect(head.getByRole('link', { name: 'run #70' })).toHaveAttribute('href', '/projects/3/reports/runs?run=70');
    expect(head.getByTestId('delta-percent')).toHaveTextContent('+20.0%'); // the API's percent, not ×100 again
    expect(head.getByText('Pass rate · Judge').nextSibling).toHaveTextContent('50.0%');
    expect(head.getByText('Pairwise win rate').nextSibling).toHaveTextContent('75.0%');
    expect(head.getByText('Spent').nextSibling).toHaveTextContent('$0.0243');
    expect(head.getByText(/judges \$0\.0198 · 1,234 tokens/)).toBeInTheDocument();
    // first the run's default headline (which scorer leads), then that scorer's numbers
    const asked = requestsOf(fetch).filter((r) => r.url.includes('/dashboard')).map((r) => new URL(r.url).searchParams.get('scorer_id'));
    expect(asked).toEqual([null, '6']);
  });

  it('says in words which target is better, or that they are not distinguishable', async () => {
    const fetch = serve();
    renderProject('/projects/3/reports/runs');
    expect(await screen.findByText('Fake Smart and Fake Fast are not distinguishable')).toBeInTheDocument();
    const asked = requestsOf(fetch).find((r) => r.url.includes('/compare-targets'))!;
    expect(Object.fromEntries(new URL(asked.url).searchParams)).toEqual({ target_a: '1', target_b: '2', scorer_version_id: '61' });
    const table = screen.getByRole('table', { name: 'Paired comparisons between targets' });
    expect(within(table).getAllByRole('row')[1]).toHaveTextContent('Fake Smart vs Fake Fast2−0.200[-0.500, 0.100]0.500not distinguishable');
  });

  it('names the better target and lists flaky cases with their share and interval', async () => {
    serve({ [`${RUN}/compare-targets`]: compare('A better', -0.3, 0.01) });
    renderProject('/projects/3/reports/runs');
    expect(await screen.findByText('Fake Smart is better than Fake Fast')).toBeInTheDocument();
    expect(screen.getByText('Fake Fast: 1 of 3 repeated cases flaky (33.3%, 95% interval [6.2%, 79.2%])')).toBeInTheDocument();
    const table = screen.getByRole('table', { name: 'Flaky cases' });
    expect(within(table).getAllByRole('row')[1]).toHaveTextContent('#7Fake Fast30.6671.0002 of 3');
  });

  it('has empty states: no earlier run, no repeats', async () => {
    const s = statistics();
    serve({ '/api/projects/3/reports/runs/77/dashboard': dashboard({ delta_vs_previous: null, pairwise_win_rate: null }), [`${RUN}/statistics`]: s });
    renderProject('/projects/3/reports/runs');
    expect(await screen.findByText('No earlier scored run on this dataset')).toBeInTheDocument();
    expect(screen.getByText('No pairwise judging in this run')).toBeInTheDocument();
    expect(screen.getByText('No repeats')).toBeInTheDocument();
  });
});
