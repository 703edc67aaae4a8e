import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeEventSource } from '@/test/fakeEventSource';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { project } from '@/test/providerFixtures';
import type { Output, Progress, Run } from '../api';
import { output, progress, run as makeRun, summary } from '../testFixtures';
import { RunPage } from './RunPage';
import { dashboard } from '@/features/reports/testFixtures';

interface State {
  run: Run;
  progress: Progress;
  outputs: Output[];
}

function serve(state: State, hooks: { onProgress?: () => void; summary?: typeof summary; patch?: (req: Request) => Response | undefined } = {}) {
  return mockFetch(async (req) => {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path === '/api/projects/3') return json(project('editor'));
    if (path === '/api/projects/3/runs/7' && req.method === 'GET') return json(state.run);
    if (path === '/api/projects/3/runs/7/progress') {
      hooks.onProgress?.();
      return json(state.progress);
    }
    if (path === '/api/projects/3/runs/7/summary') return json(hooks.summary ?? summary);
    if (path === '/api/projects/3/runs/7/comparisons/summary') return json(noComparisons);
    if (path === '/api/projects/3/reports/runs/7/dashboard') return json(dashboard({ run_id: 7, delta_vs_previous: null }));
    const one = /^\/api\/projects\/3\/runs\/7\/outputs\/(\d+)$/.exec(path);
    if (one) {
      const o = state.outputs.find((x) => x.id === Number(one[1]))!;
      return json({ ...o, raw_request: { model: 'fake-fast', messages: [{ role: 'user', content: 'Capital of France?' }] }, raw_response: { id: 'r1' }, case_input: { question: 'Capital of France?' }, case_expected: null, finished_at: null });
    }
    if (path === '/api/projects/3/runs/7/outputs') {
      const status = url.searchParams.get('status');
      const target = url.searchParams.get('target_id');
      const items = state.outputs.filter((o) => (!status || o.status === status) && (!target || o.target_id === Number(target)));
      return json({ items, total: items.length, page: 1, page_size: Number(url.searchParams.get('page_size') ?? 50) });
    }
    if (path === '/api/projects/3/runs/7' && req.method === 'PATCH') {
      const refused = hooks.patch?.(req);
      if (refused) return refused;
      const body = (await req.json()) as { budget_micros: number | null };
      state.run = { ...state.run, budget_micros: body.budget_micros };
      return json(state.run);
    }
    const action = /^\/api\/projects\/3\/runs\/7\/(pause|resume|cancel|retry-failed)$/.exec(path);
    if (action && req.method === 'POST') {
      const next = { pause: 'paused', resume: 'running', cancel: 'cancelled', 'retry-failed': 'running' }[action[1]] as Run['status'];
      state.run = { ...state.run, status: next };
      state.progress = { ...state.progress, status: next };
      return json(state.run);
    }
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

const renderRun = () => renderWithProviders(<RunPage />, { route: '/projects/3/runs/7', path: '/projects/:projectId/runs/:runId' });

beforeEach(() => {
  vi.stubGlobal('EventSource', FakeEventSource);
});
afterEach(() => {
  FakeEventSource.instances = [];
});

const noComparisons = { run_id: 7, pairs: [], ratings: { available: false, message: null, n_comparisons: 0, confidence: 0.95, items: [] } };

describe('RunPage', { timeout: 20_000 }, () => {
  it('moves one bar per target, cost, tokens and phases live from the event stream', async () => {
    const state: State = { run: makeRun(), progress: progress('pending', [0, 0], [0, 0]), outputs: [] };
    const fetch = serve(state);
    renderRun();

    const bar = await screen.findByRole('progressbar', { name: 'Run progress' });
    expect(bar).toHaveAttribute('aria-valuenow', '0');
    expect(screen.getByTestId('run-status')).toHaveTextContent('Pending');
    expect(await screen.findByText('No outputs yet')).toBeInTheDocument();

    const es = FakeEventSource.instances[0];
    expect(es.url).toBe('/api/projects/3/runs/7/events');
    act(() => es.open());
    expect(screen.getByTestId('stream-state')).toHaveTextContent('Live');

    state.outputs = [output(1), output(2, { status: 'failed', text: null, error_class: 'timeout', error: 'no reply in 120 s' })];
    act(() => es.emit('run.started', progress('running', [0, 0], [0, 0])));
    act(() => es.emit('run.progress', progress('running', [1, 1], [2, 0])));
    expect(bar).toHaveAttribute('aria-valuenow', '50');
    expect(screen.getByTestId('run-status')).toHaveTextContent('Running');
    expect(screen.getByRole('progressbar', { name: 'Progress of Fake Fast' })).toHaveAttribute('aria-valuenow', '50');
    expect(screen.getByTestId('target-11-counts')).toHaveTextContent('2/4 · 1 failed');
    expect(screen.getByRole('progressbar', { name: 'Progress of Fake Slow' })).toHaveAttribute('aria-valuenow', '50');
    expect(screen.getByTestId('target-12-counts')).toHaveTextContent('2/4');
    expect(screen.getByTestId('run-cost')).toHaveTextContent('$0.30 / $1.00 budget (30%)');
    expect(screen.getByTestId('run-tokens')).toHaveTextContent('45');
    expect(screen.getByTestId('phase-1')).toHaveTextContent('Complete (8 cells)');
    expect(screen.getByTestId('phase-2')).toHaveTextContent('In progress (50%)');
    expect(screen.getByTestId('phase-3')).toHaveTextContent('Waiting');
    expect(screen.getByTestId('run-eta')).toHaveTextContent('~20s');
    // the outputs and the failures list were invalidated and refetched
    expect(await screen.findByText('answer 1')).toBeInTheDocument();
    const failed = await screen.findByRole('list', { name: 'Failed cells' });
    expect(failed).toHaveTextContent('timeout: no reply in 120 s');
    expect(screen.getByRole('list', { name: 'Errors by class' })).toHaveTextContent('timeout: 1');

    act(() => es.emit('run.finished', progress('completed', [4, 0], [4, 0], { finished_at: '2024-01-01T00:00:09Z', eta_s: null })));
    expect(bar).toHaveAttribute('aria-valuenow', '100');
    expect(screen.getByTestId('run-status')).toHaveTextContent('Completed');
    expect(screen.getByTestId('phase-3')).toHaveTextContent('Completed');
    expect(screen.getByTestId('run-eta')).toHaveTextContent('Done');
    expect(es.closed).toBe(true);
    await waitFor(() =>
      expect(requestsOf(fetch).filter((r) => new URL(r.url).pathname.endsWith('/summary')).length).toBeGreaterThanOrEqual(2),
    );
    expect(await screen.findByRole('table', { name: 'Summary per target' })).toHaveTextContent('101 ms / 190 ms');
  });

  it('shows the budget alert when a run.budget_alert event arrives, and the project budget', async () => {
    const state: State = { run: makeRun({ status: 'running', budget_micros: 10_000_000 }), progress: progress('running', [1, 0], [0, 0], { budget_micros: 10_000_000 }), outputs: [] };
    serve(state);
    renderRun();
    await screen.findByRole('progressbar', { name: 'Run progress' });
    expect(screen.queryByTestId('budget-alert')).not.toBeInTheDocument();
    const es = FakeEventSource.instances[0];
    act(() =>
      es.emit(
        'run.budget_alert',
        progress('running', [3, 0], [2, 0], { budget_micros: 600_000, spent_micros: 500_000, project_budget_micros: 5_000_000, project_spent_micros: 1_250_000 }),
      ),
    );
    expect(screen.getByTestId('budget-alert')).toHaveTextContent('Budget alert: $0.50 spent, 80% of the $0.60 budget reached.');
    expect(screen.getByTestId('project-budget')).toHaveTextContent('Project: $1.25 / $5.00 (25%)');
    expect(screen.queryByTestId('run-judge-cost')).not.toBeInTheDocument();
    act(() => es.emit('run.progress', progress('running', [4, 0], [2, 0], { budget_micros: 600_000, spent_micros: 560_000, judge_spent_micros: 60_000 })));
    expect(screen.getByTestId('run-cost')).toHaveTextContent('$0.56 / $0.60 budget (93%)');
    expect(screen.getByTestId('run-judge-cost')).toHaveTextContent('of which $0.06 for LLM judges');
  });

  it('says why a run stopped at its budget, below the alert threshold too', async () => {
    const state: State = {
      run: makeRun({ status: 'budget_exceeded', finished_at: ts() }),
      progress: progress('budget_exceeded', [3, 0], [2, 0], { skipped: 3, done: 8, budget_micros: 1_000_000, spent_micros: 500_000, finished_at: ts() }),
      outputs: [],
    };
    serve(state);
    renderRun();
    expect(await screen.findByTestId('budget-alert')).toHaveTextContent('Budget exceeded: $0.50 spent of $1.00');
    expect(screen.getByRole('alert')).toContainElement(screen.getByTestId('budget-alert'));
    expect(screen.getByRole('button', { name: 'Retry failed cells' })).toBeInTheDocument();
  });

  it('names a run that answers from documents in its header', async () => {
    const plain = makeRun({ status: 'completed', finished_at: ts() });
    const state: State = {
      run: { ...plain, settings: { ...plain.settings, rag: { document_ids: [7, 8], top_k: 2, template: '{{context}} {{question}}' } } },
      progress: progress('completed', [4, 0], [4, 0], { finished_at: ts() }),
      outputs: [],
    };
    serve(state);
    renderRun();
    expect(await screen.findByText(/answers from 2 documents, 2 chunks per question/)).toBeInTheDocument();
  });

  it('pauses, resumes, and cancels only after a confirmation that shows progress and cost', async () => {
    const state: State = { run: makeRun({ status: 'running' }), progress: progress('running', [2, 1], [0, 0]), outputs: [] };
    const fetch = serve(state);
    renderRun();
    await userEvent.click(await screen.findByRole('button', { name: /Pause/ }));
    await waitFor(() => expect(screen.getByTestId('run-status')).toHaveTextContent('Paused'));
    expect(screen.getByTestId('phase-2')).toHaveTextContent('Paused (37%)');
    await userEvent.click(screen.getByRole('button', { name: /Resume/ }));
    await waitFor(() => expect(screen.getByTestId('run-status')).toHaveTextContent('Running'));

    await userEvent.click(screen.getByRole('button', { name: 'Cancel run' }));
    const dialog = screen.getByRole('dialog', { name: 'Cancel this run?' });
    expect(within(dialog).getByTestId('cancel-summary')).toHaveTextContent('3 of 8 cells (37%)');
    expect(within(dialog).getByTestId('cancel-summary')).toHaveTextContent('$0.20');
    expect(dialog).toHaveTextContent('This cannot be undone');
    // Keep running closes without cancelling
    await userEvent.click(within(dialog).getByRole('button', { name: 'Keep running' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => r.url.endsWith('/cancel'))).toBe(false);

    await userEvent.click(screen.getByRole('button', { name: 'Cancel run' }));
    await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Cancel run' }));
    await waitFor(() => expect(screen.getByTestId('run-status')).toHaveTextContent('Cancelled'));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    const posts = requestsOf(fetch).filter((r) => r.method === 'POST').map((r) => new URL(r.url).pathname.split('/').pop());
    expect(posts).toEqual(['pause', 'resume', 'cancel']);
    expect(screen.queryByRole('button', { name: /Pause|Resume|Cancel run/ })).not.toBeInTheDocument();
  });

  it('shows the server refusal of a transition (409)', async () => {
    const state: State = { run: makeRun({ status: 'running' }), progress: progress('running', [1, 0], [0, 0]), outputs: [] };
    mockFetch(async (req) => {
      const path = new URL(req.url).pathname;
      if (path.endsWith('/pause')) return json({ code: 'INVALID_TRANSITION', status: 409, message: 'A completed run cannot be paused', errors: {} }, 409);
      if (path === '/api/projects/3') return json(project('editor'));
      if (path === '/api/projects/3/runs/7' && req.method === 'GET') return json(state.run);
      if (path.endsWith('/progress')) return json(state.progress);
      if (path.endsWith('/summary')) return json(summary);
      return json({ items: [], total: 0, page: 1, page_size: 50 });
    });
    renderRun();
    await userEvent.click(await screen.findByRole('button', { name: /Pause/ }));
    expect(await screen.findByText('A completed run cannot be paused')).toBeInTheDocument();
  });

  it('retries the failed cells of a partial run', async () => {
    const failedOutput = output(3, { status: 'failed', text: null, error_class: 'rate_limited', error: '429 from the provider', attempts: 3 });
    const state: State = {
      run: makeRun({ status: 'partial', succeeded: 7, failed: 1, finished_at: '2024-01-01T00:00:09Z' }),
      progress: progress('partial', [3, 1], [4, 0], { errors: { rate_limited: 1 } }),
      outputs: [output(1), failedOutput],
    };
    const fetch = serve(state);
    renderRun();
    const list = await screen.findByRole('list', { name: 'Failed cells' });
    expect(list).toHaveTextContent('Case #3 · Fake Fast · 3 attempts');
    expect(list).toHaveTextContent('rate_limited: 429 from the provider');
    expect(FakeEventSource.instances).toHaveLength(0);
    await userEvent.click(screen.getByRole('button', { name: 'Retry failed cells' }));
    await waitFor(() => expect(screen.getByTestId('run-status')).toHaveTextContent('Running'));
    expect(requestsOf(fetch).some((r) => r.method === 'POST' && r.url.endsWith('/retry-failed'))).toBe(true);
    // running again: the page follows it live
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
  });

  it('filters the outputs by target and status', async () => {
    const state: State = {
      run: makeRun({ status: 'completed', succeeded: 8, finished_at: ts() }),
      progress: progress('completed', [4, 0], [4, 0]),
      outputs: [output(1), output(2, { target_id: 12, label: 'Fake Slow', text: 'slow answer' })],
    };
    const fetch = serve(state);
    renderRun();
    expect(await screen.findByText('slow answer')).toBeInTheDocument();
    await userEvent.selectOptions(screen.getByLabelText('Target'), '12');
    await waitFor(() => expect(screen.queryByText('answer 1')).not.toBeInTheDocument());
    expect(screen.getByText('slow answer')).toBeInTheDocument();
    await userEvent.selectOptions(screen.getByLabelText('Status'), 'failed');
    expect(await screen.findByText('No outputs match these filters')).toBeInTheDocument();
    const last = requestsOf(fetch).filter((r) => new URL(r.url).pathname.endsWith('/outputs')).pop()!;
    expect(new URL(last.url).searchParams.get('target_id')).toBe('12');
    expect(new URL(last.url).searchParams.get('status')).toBe('failed');
  });

  it('opens one output with its case and raw request and response', async () => {
    const state: State = { run: makeRun({ status: 'completed', succeeded: 8, finished_at: ts() }), progress: progress('completed', [4, 0], [4, 0]), outputs: [output(1)] };
    serve(state);
    renderRun();
    await userEvent.click(await screen.findByRole('button', { name: 'Details of case #1, Fake Fast' }));
    const dialog = await screen.findByRole('dialog', { name: 'Case #1 · Fake Fast' });
    expect(await within(dialog).findByText(/"model": "fake-fast"/)).toBeInTheDocument();
    expect(dialog).toHaveTextContent('Capital of France?');
    expect(dialog).toHaveTextContent('answer 1');
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('polls GET /progress every 3 s and says "Reconnecting…" while the stream is down', async () => {
    const state: State = { run: makeRun({ status: 'running' }), progress: progress('running', [1, 0], [0, 0]), outputs: [] };
    let calls = 0;
    serve(state, {
      onProgress: () => {
        calls += 1;
        if (calls >= 2) state.progress = progress('running', [3, 0], [3, 0]);
      },
    });
    renderRun();
    await screen.findByRole('progressbar', { name: 'Run progress' });
    act(() => FakeEventSource.instances[0].fail(0));
    expect(await screen.findByTestId('stream-state')).toHaveTextContent('Reconnecting…');
    await waitFor(() => expect(screen.getByRole('progressbar', { name: 'Run progress' })).toHaveAttribute('aria-valuenow', '75'), { timeout: 5000 });
    expect(calls).toBeGreaterThanOrEqual(2);
    // the stream comes back: polling stops
    act(() => FakeEventSource.instances[0].open());
    expect(screen.getByTestId('stream-state')).toHaveTextContent('Live');
  });

  it('after a cancel, keeps reading /progress until the cells that were in flight are recorded', async () => {
    const stoppedAt = new Date().toISOString();
    const state: State = {
      run: makeRun({ status: 'cancelled', succeeded: 2, skipped: 5, finished_at: stoppedAt }),
      progress: progress('cancelled', [1, 0], [1, 0], { skipped: 5, finished_at: stoppedAt }),
      outputs: [],
    };
    let calls = 0;
    serve(state, {
      onProgress: () => {
        calls += 1;
        if (calls >= 2) state.progress = progress('cancelled', [2, 0], [1, 0], { skipped: 5, finished_at: stoppedAt });
      },
    });
    renderRun();
    expect(await screen.findByTestId('run-skipped')).toHaveTextContent('5');
    await waitFor(() => expect(screen.getByTestId('run-succeeded')).toHaveTextContent('3'), { timeout: 5000 });
    const settled = calls;
    await new Promise((r) => setTimeout(r, 2500));
    expect(calls).toBe(settled); // all 8 accounted for: no more polling
    expect(FakeEventSource.instances).toHaveLength(0);
  });

  it('shows a run cancelled at 25% as cancelled: not done, not green, its skipped cells counted', async () => {
    const stoppedAt = '2024-01-01T00:01:00Z';
    const targets = [
      { target_id: 11, label: 'Fake Fast', total: 4, succeeded: 1, failed: 0, skipped: 3, spent_micros: 1, tokens_in: 1, tokens_out: 1, errors: { cancelled: 3 } },
      { target_id: 12, label: 'Fake Slow', total: 4, succeeded: 1, failed: 0, skipped: 3, spent_micros: 1, tokens_in: 1, tokens_out: 1, errors: { cancelled: 3 } },
    ];
    const state: State = {
      run: makeRun({ status: 'cancelled', succeeded: 2, skipped: 6, finished_at: stoppedAt }),
      progress: progress('cancelled', [1, 0], [1, 0], { skipped: 6, finished_at: stoppedAt, targets, errors: { cancelled: 6 } }),
      outputs: [],
    };
    serve(state);
    renderRun();
    const phase = await screen.findByTestId('phase-2');
    await waitFor(() => expect(phase).toHaveTextContent('Cancelled at 25% · 6 never sent'));
    expect(phase).not.toHaveTextContent('Done');
    expect(screen.getByTestId('run-percent')).toHaveTextContent('25%');
    expect(screen.getByTestId('run-eta')).toHaveTextContent('Cancelled');
    const bar = screen.getByRole('progressbar', { name: 'Run progress' });
    expect(bar).toHaveAttribute('aria-valuenow', '25');
    expect(bar.firstElementChild).not.toHaveClass('bg-emerald-600');
    expect(screen.getByTestId('target-11-counts')).toHaveTextContent('1/4 · 3 skipped');
    expect(screen.getByRole('progressbar', { name: 'Progress of Fake Fast' }).firstElementChild).toHaveClass('bg-amber-500');
  });

  it('never follows a cancel with "No failures": the cells never sent are named', async () => {
    const stoppedAt = '2024-01-01T00:01:00Z';
    const state: State = {
      run: makeRun({ status: 'cancelled', succeeded: 2, skipped: 6, finished_at: stoppedAt }),
      progress: progress('cancelled', [1, 0], [1, 0], { skipped: 6, finished_at: stoppedAt, errors: { cancelled: 6 } }),
      outputs: [],
    };
    serve(state);
    renderRun();
    expect(await screen.findByTestId('no-call-failures')).toHaveTextContent('No call failed; 6 cells were never sent (cancelled).');
    expect(screen.queryByText('No failures')).not.toBeInTheDocument();
  });

  it('gives a partial run no green tick: its phases say it ended with failures', async () => {
    const state: State = {
      run: makeRun({ status: 'partial', succeeded: 7, failed: 1, finished_at: '2024-01-01T00:00:09Z' }),
      progress: progress('partial', [3, 1], [4, 0], { errors: { rate_limited: 1 } }),
      outputs: [],
    };
    serve(state);
    renderRun();
    const phase = await screen.findByTestId('phase-2');
    await waitFor(() => expect(phase).toHaveTextContent('Ended (100%) · 1 failed'));
    for (const id of ['phase-2', 'phase-3']) {
      expect(screen.getByTestId(id)).not.toHaveTextContent('✓');
      expect(screen.getByTestId(id)).not.toHaveTextContent('Done');
    }
    expect(screen.getByRole('progressbar', { name: 'Run progress' }).firstElementChild).not.toHaveClass('bg-emerald-600');
  });

  it('never says "No failures" when the judge scores all errored: shows them by class beside call errors', async () => {
    const state: State = { run: makeRun({ status: 'completed', succeeded: 8 }), progress: progress('completed', [4, 0], [4, 0]), outputs: [] };
    const scoring = [
      { scorer_id: 30, name: 'Judge', kind: 'llm_judge', scores: 8, passed: 0, failed: 0, errored: 8, errors: { judge_reply_rejected: 6, judge_call_timeout: 2 } },
    ];
    serve(state, { summary: { ...summary, scoring } });
    renderRun();
    expect(await screen.findByTestId('scoring-30')).toHaveTextContent('Judge: 8 scores · 0 passed · 8 errored');
    expect(screen.getByRole('list', { name: 'Scoring errors of Judge by class' })).toHaveTextContent('judge_reply_rejected: 6');
    expect(await screen.findByTestId('no-call-failures')).toHaveTextContent('No call failed; 8 scores failed or could not be given');
    expect(screen.queryByText('No failures')).toBeNull();
  });

  it('raises the budget of a run stopped for budget, then resumes it', async () => {
    const state: State = {
      run: makeRun({ status: 'budget_exceeded', succeeded: 4, skipped: 4, budget_micros: 10_000 }),
      progress: progress('budget_exceeded', [2, 2], [4, 4], { spent_micros: 9_000, budget_micros: 10_000, skipped: 4 }),
      outputs: [output(1)],
    };
    const fetch = serve(state);
    renderRun();
    const field = await screen.findByLabelText('New budget ($, empty for none)');
    await userEvent.type(field, '0.005');
    await userEvent.click(screen.getByRole('button', { name: 'Raise budget and resume' }));
    expect(await screen.findByText(/Enter more than the/)).toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => r.method === 'PATCH')).toBe(false);
    await userEvent.clear(field);
    await userEvent.type(field, '0.05');
    await userEvent.click(screen.getByRole('button', { name: 'Raise budget and resume' }));
    await waitFor(() => expect(screen.getByTestId('run-status')).toHaveTextContent('Running'));
    const sent = requestsOf(fetch).filter((r) => r.method !== 'GET').map((r) => `${r.method} ${new URL(r.url).pathname}`);
    expect(sent).toEqual(['PATCH /api/projects/3/runs/7', 'POST /api/projects/3/runs/7/resume']);
    expect(state.run.budget_micros).toBe(50_000);
  });

  it('raises the budget based on the run it read; a stale raise changes nothing and offers Reload or Keep mine', async () => {
    const state: State = {
      run: makeRun({ status: 'budget_exceeded', succeeded: 4, skipped: 4, budget_micros: 10_000, row_version: 2 }),
      progress: progress('budget_exceeded', [2, 2], [4, 4], { spent_micros: 9_000, budget_micros: 10_000, skipped: 4 }),
      outputs: [output(1)],
    };
    // Someone else set a budget meanwhile: version 3 is stored
    const fetch = serve(state, {
      patch: (req) =>
        req.headers.get('If-Match') === '"2"'
          ? json({ code: 'STALE_WRITE', status: 412, message: 'Changed', errors: {}, current: { ...state.run, budget_micros: 20_000, row_version: 3 }, current_version: 3 }, 412)
          : undefined,
    });
    renderRun();
    await userEvent.type(await screen.findByLabelText('New budget ($, empty for none)'), '0.05');
    await userEvent.click(screen.getByRole('button', { name: 'Raise budget and resume' }));
    expect(await screen.findByText(/This was changed elsewhere/)).toBeInTheDocument();
    expect(screen.getByText('Budget: $0.05')).toBeInTheDocument();
    const writes = () => requestsOf(fetch).filter((r) => r.method !== 'GET');
    expect(writes().map((r) => r.method)).toEqual(['PATCH']); // not resumed either
    expect(writes()[0].headers.get('If-Match')).toBe('"2"');
    expect(state.run.budget_micros).toBe(10_000);

    await userEvent.click(screen.getByRole('button', { name: 'Keep mine' }));
    await waitFor(() => expect(screen.getByTestId('run-status')).toHaveTextContent('Running'));
    expect(writes().map((r) => `${r.method} ${r.headers.get('If-Match') ?? ''}`)).toEqual(['PATCH "2"', 'PATCH "3"', 'POST ']);
    expect(state.run.budget_micros).toBe(50_000);
  });

  it('shows the server message with a retry button when the run cannot load', async () => {
    mockFetch(() => json({ code: 'INTERNAL_ERROR', status: 500, message: 'Redis is down', errors: {} }, 500));
    renderRun();
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load the run');
    expect(alert).toHaveTextContent('Redis is down');
    expect(screen.getByRole('button', { name: 'Try again' })).toBeInTheDocument();
  });
});

function ts() {
  return '2024-01-01T00:00:09Z';
}
