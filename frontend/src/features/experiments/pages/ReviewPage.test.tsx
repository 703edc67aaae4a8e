import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { ReviewPage } from './ReviewPage';

const ts = '2026-11-25T10:00:00Z';
const template = 'line one\nline two\nline three\n';
const diff = '--- a/prompt.txt\n+++ b/prompt.txt\n@@ -1,3 +1,3 @@\n line one\n-line two\n+line 2, kinder\n line three\n';
const experiment = { id: 5, name: 'Support loop', status: 'running', prompt_id: 7, config: {}, spent_micros: 0, budget_micros: 1_000_000, created_at: ts, updated_at: ts };
const iteration = {
  id: 9, experiment_id: 5, number: 1, dataset_version_id: 2, tokens_in: 0, tokens_out: 0, phase_started_at: null, status: 'awaiting_review', paused: false, prompt_version_id: 40, run_id: 1, composite: 3.1, holdout_composite: 3.0, refinement_composite: 3.2,
  weakest_criteria: ['Empathy'], error: null, execution_micros: 1, judging_micros: 1, refinement_micros: 1, created_at: ts, finished_at: null,
  aggregate: { best_model: 'Fake mini', models: { 'Fake mini': { all: { composite: { mean: 0.61, low: 0.5, high: 0.7 }, criteria: { Empathy: { mean: 0.21, low: 0.18, high: 0.25 } } } } } },
};
const suggestion = {
    id: 11, iteration_id: 9, attempts: 1, reviewed_by: null, created_at: ts, comments: [], status: 'pending', diff, original_diff: diff, note: 'Be kinder on line two.', no_suggestion_reason: null, validation_errors: [], cost_micros: 1200, reject_reason: null,
    prompt_version_id: null, reviewed_at: null,
    exemplars: [
      { case_id: 1, input: { question: 'Where is my order?' }, output: 'Check the site.', scores: { Empathy: 1 } },
      { case_id: 2, input: { question: 'Refund?' }, output: 'No.', scores: { Empathy: 0 } },
    ],
};
const prompt = {
  id: 7, name: 'Support', description: null, archived_at: null, created_at: ts, production_version_id: 40, production_number: 1,
  latest: null, versions: [{ id: 40, prompt_id: 7, number: 1, template, system: null, few_shots: [], tools: [], variables: ['question'], note: null, parent_id: null, created_by: 1, author: 'Ada', created_at: ts }],
};

function serve() {
  return mockFetch(async (req) => {
    const url = new URL(req.url);
    if (req.method === 'GET' && url.pathname === '/api/projects/3/experiments/5') return json(experiment);
    if (req.method === 'GET' && url.pathname === '/api/projects/3/experiments/5/iterations/1') return json(iteration);
    if (req.method === 'GET' && url.pathname === '/api/projects/3/experiments/5/iterations/1/suggestion') return json(suggestion);
    if (req.method === 'GET' && url.pathname === '/api/projects/3/prompts/7') return json(prompt);
    if (req.method === 'POST' && url.pathname.includes('/reject')) {
      const body = (await req.json()) as { reason: string };
      return body.reason ? json({ ok: true }) : json({ code: 'VALIDATION', status: 422, message: 'bad', errors: { json: { reason: ['Required'] } } }, 422);
    }
    if (req.method === 'POST') return json({ ok: true });
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

const posts = (fetch: ReturnType<typeof mockFetch>) => requestsOf(fetch).filter((r) => r.method === 'POST').map((r) => new URL(r.url).pathname);

describe('ReviewPage', () => {
  it('shows the note, the highlighted diff and the exemplars one at a time', async () => {
    serve();
    renderWithProviders(<ReviewPage />, { route: '/projects/3/experiments/5/iterations/1/review', path: '/projects/:projectId/experiments/:experimentId/iterations/:number/review' });
    expect(await screen.findByTestId('suggestion-note')).toHaveTextContent('Be kinder on line two.');
    const rows = screen.getByTestId('diff-view').querySelectorAll('[data-kind]');
    expect([...rows].map((r) => r.getAttribute('data-kind'))).toEqual(['hunk', 'ctx', 'del', 'add', 'ctx']);
    expect(screen.getByText('Empathy (currently 0.21 [0.18, 0.25])')).toBeInTheDocument();
    expect(screen.getByTestId('exemplar-position')).toHaveTextContent('Example 1 of 2');
    await userEvent.click(screen.getByRole('button', { name: 'Next example' }));
    expect(screen.getByTestId('exemplar-position')).toHaveTextContent('Example 2 of 2');
  });

  it('"." approves, but not while typing in the comment; "," opens reject, which needs a reason', async () => {
    const fetch = serve();
    renderWithProviders(<ReviewPage />, { route: '/projects/3/experiments/5/iterations/1/review', path: '/projects/:projectId/experiments/:experimentId/iterations/:number/review' });
    const comment = await screen.findByLabelText('Comment (optional, audited)');
    await userEvent.type(comment, 'ok. fine, e');
    expect(posts(fetch)).toEqual([]);
    expect(screen.queryByRole('dialog')).toBeNull();

    comment.blur();
    await userEvent.keyboard(',');
    const dialog = await screen.findByRole('dialog', { name: 'Reject the suggestion' });
    await userEvent.click(screen.getByRole('button', { name: 'Reject' }));
    expect(dialog).toHaveTextContent('Say why you reject it');
    expect(posts(fetch)).toEqual([]);
    await userEvent.keyboard('{Escape}');

    await userEvent.keyboard('.');
    await waitFor(() => expect(posts(fetch)).toEqual(['/api/projects/3/experiments/5/iterations/1/approve']));
    const body = (await requestsOf(fetch).find((r) => r.method === 'POST')!.clone().json()) as { comment?: string };
    expect(body.comment).toBe('ok. fine, e');
  });

  it('"E" opens the diff editor with a live "applies" check', async () => {
    serve();
    renderWithProviders(<ReviewPage />, { route: '/projects/3/experiments/5/iterations/1/review', path: '/projects/:projectId/experiments/:experimentId/iterations/:number/review' });
    await screen.findByTestId('suggestion-note');
    await userEvent.keyboard('E');
    expect(await screen.findByRole('dialog', { name: 'Edit the diff' })).toBeInTheDocument();
    expect(screen.getByTestId('edit-preview-state')).toHaveTextContent('Applies cleanly.');
    const box = screen.getByLabelText('Unified diff');
    await userEvent.clear(box);
    await userEvent.type(box, '--- a/p{Enter}+++ b/p{Enter}@@ -1,1 +1,1 @@{Enter}-nope{Enter}+yes{Enter}');
    expect(screen.getByTestId('edit-preview-state')).toHaveTextContent('does not apply');
  });

  it('"no suggestion" lists each refused attempt and offers retry (a draft copy), edit by hand, finish', async () => {
    const none = {
      ...suggestion, status: 'none', diff: null, original_diff: null, note: null, attempts: 2,
      no_suggestion_reason: 'No valid suggestion after 2 attempt(s): The diff removes {{question}}',
      validation_errors: ['no <diff>...</diff> block was found', 'The diff removes {{question}}'],
      attempt_failures: [
        { attempt: 1, kind: 'format', rule: 'reply_format', message: 'no <diff>...</diff> block was found' },
        { attempt: 2, kind: 'guardrail', rule: 'variables_unchanged', message: 'The diff removes {{question}}' },
      ],
    };
    const fetch = mockFetch(async (req) => {
      const url = new URL(req.url);
      if (req.method === 'GET' && url.pathname === '/api/projects/3/experiments/5') return json({ ...experiment, status: 'completed' });
      if (req.method === 'GET' && url.pathname === '/api/projects/3/experiments/5/iterations/1') return json({ ...iteration, status: 'completed' });
      if (req.method === 'GET' && url.pathname === '/api/projects/3/experiments/5/iterations/1/suggestion') return json(none);
      if (req.method === 'GET' && url.pathname === '/api/projects/3/prompts/7') return json(prompt);
      if (req.method === 'POST' && url.pathname === '/api/projects/3/experiments/5/duplicate') return json({ ...experiment, id: 6, status: 'draft' }, 201);
      return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
    });
    renderWithProviders(<ReviewPage />, { route: '/projects/3/experiments/5/iterations/1/review', path: '/projects/:projectId/experiments/:experimentId/iterations/:number/review' });
    const list = await screen.findByTestId('attempt-failures');
    const items = list.querySelectorAll('li');
    expect(items).toHaveLength(2);
    expect(items[0]).toHaveTextContent('Attempt 1 — Format: reply not in the <diff>/<note> format.');
    expect(items[1]).toHaveTextContent('Attempt 2 — Guardrail variables_unchanged: adds or removes a {{variable}}.');
    expect(screen.getByRole('link', { name: 'Edit the prompt by hand' })).toHaveAttribute('href', '/projects/3/prompts/7');
    expect(screen.getByRole('link', { name: 'Finish: see the report' })).toHaveAttribute('href', '/projects/3/experiments/5/report');
    await userEvent.click(screen.getByRole('button', { name: 'Retry with another refiner model' }));
    await waitFor(() => expect(posts(fetch)).toEqual(['/api/projects/3/experiments/5/duplicate']));
  });

  it('after a reject the new suggestion appears without a reload', async () => {
    let phase: 'awaiting_review' | 'refining' = 'awaiting_review';
    let current: Record<string, unknown> = suggestion;
    let rejectedAt = 0;
    const second = { ...suggestion, id: 12, note: 'Acknowledge the customer first.' };
    mockFetch(async (req) => {
      const url = new URL(req.url);
      if (req.method === 'GET' && url.pathname === '/api/projects/3/experiments/5') return json(experiment);
      if (req.method === 'GET' && url.pathname === '/api/projects/3/experiments/5/iterations/1') {
        // the refiner answers a second after the rejection, while the page polls
        if (phase === 'refining' && Date.now() - rejectedAt > 1000) {
          phase = 'awaiting_review';
          current = second;
        }
        return json({ ...iteration, status: phase });
      }
      if (req.method === 'GET' && url.pathname === '/api/projects/3/experiments/5/iterations/1/suggestion') return json(current);
      if (req.method === 'GET' && url.pathname === '/api/projects/3/prompts/7') return json(prompt);
      if (req.method === 'POST' && url.pathname.endsWith('/reject')) {
        phase = 'refining';
        rejectedAt = Date.now();
        current = { ...suggestion, status: 'rejected', reject_reason: 'Too vague' };
        return json(current);
      }
      return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
    });
    renderWithProviders(<ReviewPage />, { route: '/projects/3/experiments/5/iterations/1/review', path: '/projects/:projectId/experiments/:experimentId/iterations/:number/review' });
    expect(await screen.findByTestId('suggestion-note')).toHaveTextContent('Be kinder on line two.');
    await userEvent.click(screen.getByRole('button', { name: /Reject/ }));
    const dialog = await screen.findByRole('dialog', { name: 'Reject the suggestion' });
    await userEvent.type(within(dialog).getByRole('textbox'), 'Too vague');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Reject' }));
    expect(await screen.findByTestId('refining')).toHaveTextContent('The refiner is proposing a new suggestion');
    await waitFor(() => expect(screen.getByTestId('suggestion-note')).toHaveTextContent('Acknowledge the customer first.'), { timeout: 5000 });
    expect(screen.queryByTestId('refining')).toBeNull();
    expect(screen.getByRole('button', { name: /Approve/ })).toBeInTheDocument();
    expect(screen.queryByText(/Rejected: the reason is recorded/)).toBeNull();
  }, 10000);
});
