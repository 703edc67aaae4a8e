import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { FakeEventSource } from '@/test/fakeEventSource';
import { AddScorersDialog } from './AddScorersDialog';
import { PairwiseSection } from './PairwiseSection';
import { ScorerPicker } from './ScorerPicker';
import type { AttachEstimate, ComparisonSummary, Scorer } from './api';

const ts = '2024-01-01T00:00:00Z';
const version = (id: number, scorerId: number, number: number, params: Record<string, unknown> = {}) => ({
  id, scorer_id: scorerId, number, params, note: null, created_by: null, created_at: ts,
});
// Params as loose as these tests need: not every kind's required ones.
const scorer = (id: number, name: string, kind: Scorer['kind'], latest: ReturnType<typeof version>): Scorer => ({
  id, name, kind, description: null, archived_at: null, created_at: ts, latest,
}) as Scorer;
const contains = scorer(1, 'Mentions refund', 'contains', version(12, 1, 2));
const judge = scorer(2, 'Helpfulness', 'llm_judge', version(21, 2, 1, { judges: ['Fake Fast'] }));
const pairs = scorer(3, 'Which is better', 'pairwise_judge', version(31, 3, 1, { judges: ['Fake Fast'] }));
const page = <T,>(items: T[]) => ({ items, total: items.length, page: 1, page_size: 100 });
const estimate: AttachEstimate = {
  outputs: 6, scores: 6, judge_calls: 6, low_micros: 1200, high_micros: 9000, complete: true, unpriced_judges: [],
  run_budget_left_micros: 50_000, project_budget_left_micros: null,
  scorers: [{ scorer_version_id: 21, scorer_id: 2, name: 'Helpfulness', kind: 'llm_judge', version: 1 }],
};

afterEach(() => {
  FakeEventSource.instances = [];
});

function serve(items: Scorer[], extra: (path: string, req: Request) => Response | Promise<Response> | null = () => null) {
  return mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    const found = await extra(path, req);
    if (found) return found;
    if (path === '/api/projects/3/scorers') return json(page(items));
    if (path === '/api/projects/3/scorers/1') return json({ ...contains, versions: [version(12, 1, 2), version(11, 1, 1)] });
    if (path === '/api/projects/3/scorers/2') return json({ ...judge, versions: [judge.latest] });
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

describe('ScorerPicker', () => {
  it('says there are no scorers and links to the Scorers page', async () => {
    serve([pairs]); // a pairwise judge scores no output: not offered
    renderWithProviders(<ScorerPicker projectId={3} value={[]} onChange={() => {}} />);
    expect(await screen.findByText('No scorers yet')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to scorers' })).toHaveAttribute('href', '/projects/3/scorers');
  });
});

describe('AddScorersDialog', { timeout: 20_000 }, () => {
  it('shows the estimate and the budget left, adds the versions, then follows the job to its end', async () => {
    const fetch = serve([contains, judge], (path, req) => {
      if (path === '/api/projects/3/runs/7/scorers/estimate') return json(estimate);
      if (path === '/api/projects/3/runs/7/scorers' && req.method === 'POST') {
        return json({ run: { id: 7, scorers: [] }, events_after: '5-0' }, 202);
      }
      return null;
    });
    renderWithProviders(
      <AddScorersDialog projectId={3} run={{ id: 7, scorers: [] }} open onClose={() => {}} EventSourceImpl={FakeEventSource} />,
    );
    await userEvent.click(await screen.findByLabelText(/Helpfulness/));
    const shown = await screen.findByTestId('attach-estimate');
    expect(within(shown).getByTestId('attach-cost')).toHaveTextContent('$0.0012 – $0.009');
    expect(shown).toHaveTextContent('6 scores on 6 outputs · 6 judge calls');
    expect(within(shown).getByTestId('attach-budget')).toHaveTextContent('Budget: run $0.05 left, project no cap.');
    await userEvent.click(screen.getByRole('button', { name: 'Add and score' }));

    const sent = requestsOf(fetch).filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/api/projects/3/runs/7/scorers');
    expect(await sent[0].clone().json()).toEqual({ scorer_version_ids: [21] });
    expect(await screen.findByTestId('scoring-progress')).toBeInTheDocument();
    const es = FakeEventSource.instances.at(-1)!;
    expect(es.url).toBe('/api/projects/3/runs/7/scorers/events?last_event_id=5-0');
    act(() => es.emit('run.scored', { scores: 3 }));
    expect(screen.getByTestId('scoring-count')).toHaveTextContent('3 of 6 scores written');
    act(() => es.emit('run.scoring_finished', { scores: 6 }));
    expect(screen.getByTestId('scoring-progress')).toHaveTextContent('6 of 6 scores written · done');
    expect(es.closed).toBe(true);
    expect(screen.getByRole('button', { name: 'Done' })).toBeInTheDocument();
  });

  it('offers an older version of a scorer the run has, and says when the picked one is already on it', async () => {
    serve([contains], (path) => (path === '/api/projects/3/runs/7/scorers/estimate' ? json({ ...estimate, judge_calls: 0, low_micros: 0, high_micros: 0 }) : null));
    renderWithProviders(
      <AddScorersDialog projectId={3} run={{ id: 7, scorers: [{ scorer_version_id: 12, scorer_id: 1, name: 'Mentions refund', kind: 'contains', version: 2 }]}} open onClose={() => {}} />,
    );
    await userEvent.click(await screen.findByLabelText(/Mentions refund/));
    expect(await screen.findByText('v2 is already on this run')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add and score' })).toBeDisabled();
    await screen.findByRole('option', { name: 'v1' });
    await userEvent.selectOptions(screen.getByLabelText('Version of Mentions refund'), '11');
    expect(screen.queryByText('v2 is already on this run')).not.toBeInTheDocument();
    expect(await screen.findByTestId('attach-cost')).toHaveTextContent('$0.00');
  });

  it('shows the server\'s reasons when the versions cannot be added', async () => {
    serve([judge], (path) =>
      path === '/api/projects/3/runs/7/scorers/estimate'
        ? json({ code: 'CONFLICT', status: 409, message: 'The run has not finished', errors: {} }, 409)
        : null,
    );
    renderWithProviders(<AddScorersDialog projectId={3} run={{ id: 7, scorers: [] }} open onClose={() => {}} />);
    await userEvent.click(await screen.findByLabelText(/Helpfulness/));
    expect(await screen.findByRole('alert')).toHaveTextContent('The run has not finished');
    expect(screen.getByRole('button', { name: 'Add and score' })).toBeDisabled();
  });
});

const summary: ComparisonSummary = {
  run_id: 7,
  base_run_id: null,
  pairs: [{
    scorer_id: 3, scorer_name: 'Which is better', scorer_version_id: 31, version: 1, judge: 'Fake Fast', target_a_id: 1,
    target_a_label: 'Mini', target_b_id: 2, target_b_label: 'Large', comparisons: 4, a_wins: 1, b_wins: 2, ties: 0,
    disagreements: 1, errors: 0, position_bias: { k: 1, n: 4, estimate: 0.25, low: 0.05, high: 0.7, confidence: 0.95 },
  }],
  ratings: {
    available: true, message: null, n_comparisons: 4, confidence: 0.95,
    items: [
      { target_id: 2, label: 'Large', rating: 1087.4, low: 950.1, high: 1210.9, games: 4, wins: 2, ties: 1, losses: 1, flags: [] },
      { target_id: 1, label: 'Mini', rating: 912.6, low: 789.2, high: 1049.8, games: 4, wins: 1, ties: 1, losses: 2, flags: [] },
    ],
  },
};

describe('PairwiseSection', { timeout: 20_000 }, () => {
  it('starts judging two targets with a pairwise judge and shows ratings with intervals and position bias', async () => {
    let judged = false;
    const fetch = serve([contains, pairs], (path, req) => {
      if (path === '/api/projects/3/runs/7/comparisons' && req.method === 'POST') {
        judged = true;
        return json({ run_id: 7, scorer_id: 3, scorer_version_id: 31, target_a_id: 1, target_b_id: 2, judges: ['Fake Fast'], pairs: 4, already_compared: 0, enqueued: true }, 202);
      }
      if (path === '/api/projects/3/runs/7/comparisons/summary') {
        return json(judged ? summary : { run_id: 7, pairs: [], ratings: { ...summary.ratings, available: false, message: null, n_comparisons: 0, items: [] } });
      }
      return null;
    });
    const run = { id: 7, targets: [{ id: 1, label: 'Mini' }, { id: 2, label: 'Large' }] } as Parameters<typeof PairwiseSection>[0]['run'];
    renderWithProviders(<PairwiseSection projectId={3} run={run} canEdit />);
    expect(await screen.findByText(/No pairwise comparisons yet/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Compare two targets' }));
    const dialog = await screen.findByRole('dialog', { name: 'Compare two targets' });
    expect(within(dialog).getByLabelText('Pairwise judge')).toHaveValue('3');
    expect(within(dialog).getByLabelText('Target B')).toHaveValue('2');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Start judging' }));
    const sent = requestsOf(fetch).find((r) => r.method === 'POST' && new URL(r.url).pathname.endsWith('/comparisons'))!;
    expect(await sent.clone().json()).toEqual({ scorer_id: 3, target_a_id: 1, target_b_id: 2 });

    expect(await screen.findByText('4 of 4 judgements · done')).toBeInTheDocument();
    const ratings = screen.getAllByTestId('bt-rating').map((r) => r.textContent);
    expect(ratings).toEqual(['Large1087950 – 12112 · 1 · 1', 'Mini913789 – 10501 · 1 · 2']);
    expect(screen.getByTestId('position-bias')).toHaveTextContent('25% (5%–70%)');
  });

  it('says a pairwise judge is needed, with a link to the Scorers page', async () => {
    serve([contains], (path) => (path === '/api/projects/3/runs/7/comparisons/summary' ? json({ ...summary, pairs: [] }) : null));
    const run = { id: 7, targets: [{ id: 1, label: 'Mini' }, { id: 2, label: 'Large' }] } as Parameters<typeof PairwiseSection>[0]['run'];
    renderWithProviders(<PairwiseSection projectId={3} run={run} canEdit />);
    await userEvent.click(await screen.findByRole('button', { name: 'Compare two targets' }));
    expect(await screen.findByText('No pairwise judge yet')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to scorers' })).toHaveAttribute('href', '/projects/3/scorers');
  });
});

describe('New run scorers', { timeout: 30_000 }, () => {
  it('sends a scorer at its latest version and one at a chosen version; the confirm step shows the judges’ cost', async () => {
    const { renderProject } = await import('@/test/project');
    const { modelConfig, project } = await import('@/test/providerFixtures');
    const datasets = [{ id: 4, name: 'FAQ', description: null, kind: 'questions', split: null, case_count: 12, version: 1, archived_at: null, created_at: ts }];
    const fetch = serve([contains, judge, pairs], (path) => {
      if (path === '/api/projects/3') return json(project('editor'));
      if (path === '/api/projects/3/datasets') return json(page(datasets));
      if (path === '/api/projects/3/datasets/4/versions') return json(page([{ id: 81, number: 1, case_count: 12, created_at: ts }]));
      if (path === '/api/projects/3/models') return json(page([modelConfig({ id: 5, name: 'Mini' })]));
      if (path === '/api/projects/3/prompts') return json(page([]));
      if (path === '/api/projects/3/runs/estimate') {
        return json({
          dataset_version_id: 81, cases: 12, repeats: 1, calls: 12, low_micros: 3000, high_micros: 12_000, judge_calls: 12,
          judge_low_micros: 1000, judge_high_micros: 6000, complete: true, unpriced_models: [], problems: [],
          per_target: [{ label: 'Mini', model_id: 5, calls: 12, input_tokens: 100, output_tokens_low: 10, output_tokens_high: 40, low_micros: 2000, high_micros: 6000, priced: true }],
          assumptions: { low_output_share: 0.25, default_max_tokens: 1024, tokens_per_message: 3 },
        });
      }
      return null;
    });
    renderProject('/projects/3/runs/new');
    await userEvent.selectOptions(await screen.findByLabelText('Dataset'), '4');
    await userEvent.click(screen.getByLabelText(/^Mini/));
    const list = await screen.findByRole('list', { name: 'Scorers' });
    expect(within(list).queryByText('Which is better')).not.toBeInTheDocument();
    await userEvent.click(within(list).getByLabelText(/Helpfulness/));
    await userEvent.click(within(list).getByLabelText(/Mentions refund/));
    await screen.findByRole('option', { name: 'v1' });
    await userEvent.selectOptions(screen.getByLabelText('Version of Mentions refund'), '11');
    await userEvent.click(screen.getByRole('button', { name: 'Review' }));

    const dialog = await screen.findByRole('dialog', { name: 'Start this run?' });
    expect(within(dialog).getByTestId('estimate-judges')).toHaveTextContent('LLM judges12$0.001 – $0.006');
    const sent = requestsOf(fetch).filter((r) => new URL(r.url).pathname === '/api/projects/3/runs/estimate').pop()!;
    expect(await sent.clone().json()).toMatchObject({ scorer_ids: [2], scorer_version_ids: [11] });
  });
});
