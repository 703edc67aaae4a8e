import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useLocation } from 'react-router-dom';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { page, project } from '@/test/providerFixtures';
import { run } from '@/features/runs/testFixtures';
import type { RunDiff } from '../api';
import { CompareRunsPage, defaultBase } from './CompareRunsPage';

const ts = '2024-01-01T00:00:00Z';
const datasets = [
  { id: 4, name: 'Support FAQ', description: null, kind: 'cases', split: null, case_count: 12, version: 2, archived_at: null, created_at: ts },
  { id: 5, name: 'Chats', description: null, kind: 'conversations', split: null, case_count: 3, version: 1, archived_at: null, created_at: ts },
];
const scorer = { scorer_version_id: 31, scorer_id: 30, name: 'Exact match', kind: 'exact_match', version: 1 };
// Newest first, as the API lists them.
const runs = [
  run({ id: 9, name: 'After prompt fix', status: 'completed', dataset_id: 4, scorers: [scorer] }),
  run({ id: 8, name: 'Chats run', status: 'completed', dataset_id: 5 }),
  run({ id: 7, name: 'Nightly', status: 'completed', dataset_id: 4, scorers: [scorer] }),
];

const paired = (over: Partial<RunDiff['comparison']> = {}): RunDiff['comparison'] => ({
  n: 12, mean_base: 0.5, mean_head: 0.75, mean_difference: 0.25, low: 0.083, high: 0.417, effect_size: 0.82, p_value: 0.0312,
  test: 'mcnemar_exact', binary: true, head_higher: 4, base_higher: 1, equal: 7, verdict: 'head better', ...over,
});

function diff(over: Partial<RunDiff> = {}): RunDiff {
  const counts = { regressed: 1, new_fail: 2, still_failing: 3, fixed: 4, new_pass: 0, still_passing: 5, missing: 0 };
  return {
    base_run_id: 7, head_run_id: 9, scorer: { id: 30, name: 'Exact match', kind: 'exact_match', versions: [1] }, verdicts_from: 'scorer',
    counts, comparison: paired(),
    targets: [{ base_target_id: 11, base_label: 'Fake Fast', head_target_id: 21, head_label: 'Fake Fast', model_id: 5, counts, comparison: paired() }],
    cases: {
      items: [
        {
          case_id: 101, case_number: 1, input: { question: 'Capital of France?' }, outcome: 'regressed', base_target_id: 11, base_label: 'Fake Fast',
          head_target_id: 21, head_label: 'Fake Fast', model_id: 5, base: { passed: true, score: 1, output_id: 1 }, head: { passed: false, score: 0, output_id: 2 },
        },
        {
          case_id: 102, case_number: 2, input: { question: 'Two plus two?' }, outcome: 'new_fail', base_target_id: null, base_label: null,
          head_target_id: 21, head_label: 'Fake Fast', model_id: 5, base: null, head: { passed: false, score: 0, output_id: 3 },
        },
      ],
      total: 2, page: 1, page_size: 25,
    },
    ...over,
  };
}

function serve(answer: (url: URL) => Response = () => json(diff())) {
  return mockFetch((req) => {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path === '/api/projects/3') return json(project('viewer'));
    if (path === '/api/projects/3/runs') return json({ items: runs, total: runs.length, page: 1, page_size: 100 });
    if (path === '/api/projects/3/datasets') return json(page(datasets));
    if (/^\/api\/projects\/3\/reports\/runs\/\d+\/diff\/\d+$/.test(path)) return answer(url);
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

function Where() {
  const loc = useLocation();
  return <p data-testid="where">{loc.search}</p>;
}

const renderAt = (search: string) =>
  renderWithProviders(
    <>
      <CompareRunsPage />
      <Where />
    </>,
    { route: `/projects/3/runs/compare${search}`, path: '/projects/:projectId/runs/compare' },
  );

const diffRequests = (fetch: ReturnType<typeof mockFetch>) =>
  requestsOf(fetch).filter((r) => new URL(r.url).pathname.includes('/diff/'));

afterEach(() => vi.unstubAllGlobals());

describe('CompareRunsPage', () => {
  it('shows the counters for fixed, regressed and new fail, and the paired verdict with its interval', async () => {
    const fetch = serve();
    renderAt('?head=9&base=7');
    expect(await screen.findByTestId('count-fixed')).toHaveTextContent('4');
    expect(screen.getByTestId('count-regressed')).toHaveTextContent('1');
    expect(screen.getByTestId('count-new_fail')).toHaveTextContent('2');
    expect(screen.getByText(/Still failing: 3/)).toBeInTheDocument();
    expect(screen.getByTestId('verdict')).toHaveTextContent('Head better');
    expect(screen.getByTestId('verdict-sentence')).toHaveTextContent('After prompt fix is better than Nightly.');
    expect(screen.getByTestId('difference')).toHaveTextContent('+0.250 [+0.083, +0.417]');
    expect(screen.getByTestId('effect-size')).toHaveTextContent('0.82');
    expect(screen.getByTestId('p-value')).toHaveTextContent('0.031');
    expect(screen.getByText(/exact McNemar test/)).toBeInTheDocument();
    // The head run's scorer, which the base run also has, gives the verdicts by default.
    const url = new URL(diffRequests(fetch)[0].url);
    expect(url.pathname).toBe('/api/projects/3/reports/runs/9/diff/7');
    expect(url.searchParams.get('scorer_id')).toBe('30');
    expect(screen.queryByTestId('stopped-runs')).toBeNull(); // both completed
  });

  it('says when a run of the comparison was cancelled, with its cells never sent', async () => {
    runs[0] = run({ id: 9, name: 'After prompt fix', status: 'cancelled', dataset_id: 4, scorers: [scorer], total: 12, succeeded: 3, failed: 0, skipped: 9 });
    try {
      serve();
      renderAt('?head=9&base=7');
      expect(await screen.findByTestId('stopped-runs')).toHaveTextContent(
        'The head run, After prompt fix, is cancelled: 3 of 12 cells were sent and 9 never were',
      );
    } finally {
      runs[0] = run({ id: 9, name: 'After prompt fix', status: 'completed', dataset_id: 4, scorers: [scorer] });
    }
  });

  it('says a base-better verdict plainly, and an empty comparison as nothing to compare', async () => {
    serve(() => json(diff({ comparison: paired({ verdict: 'base better', mean_difference: -0.2, low: -0.3, high: -0.1 }) })));
    renderAt('?head=9&base=7');
    expect(await screen.findByTestId('verdict-sentence')).toHaveTextContent('After prompt fix is worse than Nightly.');
    expect(screen.getByTestId('difference')).toHaveTextContent('-0.200 [-0.300, -0.100]');
  });

  it('lists the misses, each linking to the case in the head run', async () => {
    serve();
    renderAt('?head=9&base=7');
    const list = await screen.findByRole('list', { name: 'Misses list' });
    const items = within(list).getAllByRole('listitem');
    expect(items).toHaveLength(2);
    expect(items[0]).toHaveTextContent('Regressed');
    expect(items[0]).toHaveTextContent('Capital of France?');
    expect(items[0]).toHaveTextContent('pass (1.00) → fail (0.00)');
    expect(items[1]).toHaveTextContent('no verdict → fail (0.00)');
    expect(within(items[0]).getByRole('link', { name: /Open case #1 / })).toHaveAttribute('href', '/projects/3/runs/9/cases/101');
    expect(within(items[1]).getByRole('link', { name: /Open case #2 / })).toHaveAttribute('href', '/projects/3/runs/9/cases/102');
  });

  it('filters the misses by outcome through the API', async () => {
    const fetch = serve();
    renderAt('?head=9&base=7');
    await screen.findByRole('list', { name: 'Misses list' });
    await userEvent.selectOptions(screen.getByLabelText('Show'), 'regressed');
    await waitFor(() => expect(new URL(diffRequests(fetch).at(-1)!.url).searchParams.get('outcome')).toBe('regressed'));
    expect(screen.getByTestId('where')).toHaveTextContent('outcome=regressed');
  });

  it('says clearly that runs on different datasets are not comparable, without asking for a diff', async () => {
    const fetch = serve();
    renderAt('?head=9&base=8');
    const alert = await screen.findByTestId('not-comparable');
    expect(alert).toHaveTextContent('These runs are not comparable.');
    expect(alert).toHaveTextContent('After prompt fix ran on Support FAQ and Chats run on Chats');
    expect(screen.queryByTestId('count-fixed')).not.toBeInTheDocument();
    expect(diffRequests(fetch)).toHaveLength(0);
  });

  it('shows the same message when the API answers DIFFERENT_DATASETS', async () => {
    serve(() => json({ code: 'DIFFERENT_DATASETS', status: 422, message: 'different datasets', errors: {} }, 422));
    renderAt('?head=9&base=70');
    expect(await screen.findByTestId('not-comparable')).toHaveTextContent('The two runs are on different datasets.');
  });

  it('picks the newest run and the run before it on the same dataset, and the pickers are labelled selects', async () => {
    const fetch = serve();
    renderAt('');
    await waitFor(() => expect(screen.getByTestId('where')).toHaveTextContent('head=9'));
    expect(screen.getByTestId('where')).toHaveTextContent('base=7');
    expect(await screen.findByTestId('count-fixed')).toHaveTextContent('4');
    expect(screen.getByLabelText('Head run (after)')).toHaveValue('9');
    expect(screen.getByLabelText('Base run (before)')).toHaveValue('7');
    // Swapping runs the diff the other way round.
    await userEvent.click(screen.getByRole('button', { name: 'Swap base and head runs' }));
    await waitFor(() => expect(new URL(diffRequests(fetch).at(-1)!.url).pathname).toBe('/api/projects/3/reports/runs/7/diff/9'));
  });

  it('asks for two different runs when the same run is picked twice', async () => {
    const fetch = serve();
    renderAt('?head=9&base=9');
    expect(await screen.findByText(/Pick two different runs/)).toBeInTheDocument();
    expect(diffRequests(fetch)).toHaveLength(0);
  });

  it('reads verdicts from the outputs’ status when chosen', async () => {
    const fetch = serve();
    renderAt('?head=9&base=7');
    await screen.findByTestId('count-fixed');
    await userEvent.selectOptions(screen.getByLabelText('Pass or fail from'), 'status');
    await waitFor(() => {
      const last = new URL(diffRequests(fetch).at(-1)!.url);
      expect(last.searchParams.has('scorer_id')).toBe(false);
    });
  });
});

describe('defaultBase', () => {
  it('is the newest older run on the same dataset', () => {
    expect(defaultBase(runs, runs[0])?.id).toBe(7);
    expect(defaultBase(runs, runs[1])).toBeUndefined();
  });
});
