import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { page, project } from '@/test/providerFixtures';
import { run, runTarget } from '@/features/runs/testFixtures';
import type { ComparisonSummary } from '@/features/runs/scoring/api';
import { CompareRunsPage } from './CompareRunsPage';

const ts = '2024-01-01T00:00:00Z';
const datasets = [{ id: 4, name: 'Support FAQ', description: null, kind: 'cases', split: null, case_count: 3, version: 1, archived_at: null, created_at: ts }];
const runs = [
  run({ id: 9, name: 'After fix', status: 'completed', targets: [runTarget({ id: 21, label: 'Fake Fast' }), runTarget({ id: 22, label: 'Fake Slow' })] }),
  run({ id: 7, name: 'Nightly', status: 'completed', targets: [runTarget({ id: 11, label: 'Fake Fast' }), runTarget({ id: 12, label: 'Fake Slow' })] }),
];
const judge = {
  id: 3, name: 'Which is better', kind: 'pairwise_judge', description: null, archived_at: null, created_at: ts,
  latest: { id: 31, scorer_id: 3, number: 1, params: { judges: ['Fake Fast'] }, note: null, created_by: null, created_at: ts },
};
const emptyDiff = {
  base_run_id: 7, head_run_id: 9, scorer: null, verdicts_from: 'status',
  counts: { regressed: 0, new_fail: 0, still_failing: 0, fixed: 0, new_pass: 0, still_passing: 3, missing: 0 },
  comparison: { n: 3, mean_base: 1, mean_head: 1, mean_difference: 0, low: 0, high: 0, effect_size: null, p_value: 1, test: 'mcnemar_exact', binary: true, head_higher: 0, base_higher: 0, equal: 3, verdict: 'no difference' },
  targets: [], cases: { items: [], total: 0, page: 1, page_size: 25 },
};
const judged: ComparisonSummary = {
  run_id: 9,
  base_run_id: 7,
  pairs: [{
    scorer_id: 3, scorer_name: 'Which is better', scorer_version_id: 31, version: 1, judge: 'Fake Fast', target_a_id: 22,
    target_a_label: 'After fix · Fake Slow', target_b_id: 11, target_b_label: 'Nightly · Fake Fast', comparisons: 3, a_wins: 2, b_wins: 0, ties: 0,
    disagreements: 1, errors: 0, position_bias: { k: 1, n: 3, estimate: 1 / 3, low: 0.06, high: 0.79, confidence: 0.95 },
  }],
  ratings: {
    available: true, message: null, n_comparisons: 3, confidence: 0.95,
    items: [
      { target_id: 22, label: 'After fix · Fake Slow', rating: 1120, low: 990, high: 1300, games: 3, wins: 2, ties: 1, losses: 0, flags: [] },
      { target_id: 11, label: 'Nightly · Fake Fast', rating: 880, low: 700, high: 1010, games: 3, wins: 0, ties: 1, losses: 2, flags: [] },
    ],
  },
};
const nothing: ComparisonSummary = { ...judged, pairs: [], ratings: { ...judged.ratings, available: false, message: 'No judged comparisons yet.', n_comparisons: 0, items: [] } };

function serve(start: () => Response) {
  let started = false;
  return mockFetch((req) => {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path === '/api/projects/3') return json(project('editor'));
    if (path === '/api/projects/3/runs') return json({ items: runs, total: runs.length, page: 1, page_size: 100 });
    if (path === '/api/projects/3/datasets') return json(page(datasets));
    if (path === '/api/projects/3/scorers') return json(page([judge]));
    if (path.includes('/diff/')) return json(emptyDiff);
    if (path === '/api/projects/3/runs/9/comparisons' && req.method === 'POST') {
      const reply = start();
      started = reply.status === 202;
      return reply;
    }
    if (path === '/api/projects/3/runs/9/comparisons/summary' && url.searchParams.get('base_run_id') === '7') {
      return json(started ? judged : nothing);
    }
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

const renderPage = () =>
  renderWithProviders(<CompareRunsPage />, { route: '/projects/3/runs/compare?head=9&base=7', path: '/projects/:projectId/runs/compare' });

afterEach(() => vi.unstubAllGlobals());

describe('Judge pairwise on the compare page', { timeout: 20_000 }, () => {
  it('judges a target of the head run against one of the base run and shows ratings and position bias', async () => {
    const fetch = serve(() =>
      json({ run_id: 9, scorer_id: 3, scorer_version_id: 31, target_a_id: 22, target_b_id: 11, base_run_id: 7, judges: ['Fake Fast'], pairs: 3, already_compared: 0, enqueued: true }, 202),
    );
    renderPage();
    expect(await screen.findByText(/No pairwise judgements of these two runs yet/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Judge pairwise' }));
    const dialog = await screen.findByRole('dialog', { name: 'Judge the two runs pairwise' });
    expect(within(dialog).getByLabelText('Pairwise judge')).toHaveValue('3');
    const head = within(dialog).getByLabelText('Target of the head run (A)');
    const base = within(dialog).getByLabelText('Target of the base run (B)');
    expect(within(head).getAllByRole('option').map((o) => o.getAttribute('value'))).toEqual(['21', '22']);
    expect(within(base).getAllByRole('option').map((o) => o.getAttribute('value'))).toEqual(['11', '12']);
    await userEvent.selectOptions(head, '22');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Start judging' }));
    const sent = requestsOf(fetch).find((r) => r.method === 'POST')!;
    expect(await sent.clone().json()).toEqual({ scorer_id: 3, target_a_id: 22, base_run_id: 7, base_target_id: 11 });

    expect(await screen.findByText('3 of 3 judgements · done')).toBeInTheDocument();
    const ratings = screen.getAllByTestId('bt-rating').map((r) => r.textContent);
    expect(ratings).toEqual(['After fix · Fake Slow1120990 – 13002 · 1 · 0', 'Nightly · Fake Fast880700 – 10100 · 1 · 2']);
    expect(screen.getByTestId('pair-row')).toHaveTextContent('After fix · Fake Slow vs Nightly · Fake Fast');
    expect(screen.getByTestId('position-bias')).toHaveTextContent('33% (6%–79%)');
  });

  it('shows why two runs cannot be judged and keeps the dialog open', async () => {
    const message = "The runs 'After fix' and 'Nightly' share no cases (with the same repeat and turn)";
    serve(() =>
      json({ code: 'VALIDATION_ERROR', status: 422, message: 'The runs share no cases', errors: { json: { base_run_id: [message] } } }, 422),
    );
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Judge pairwise' }));
    const dialog = await screen.findByRole('dialog', { name: 'Judge the two runs pairwise' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Start judging' }));
    expect(await within(dialog).findByText(message)).toBeInTheDocument();
    expect(screen.queryByTestId('pairwise-progress')).not.toBeInTheDocument();
  });
});
