import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { project } from '@/test/providerFixtures';
import { run as makeRun, runTarget } from '@/features/runs/testFixtures';
import type { GridPage } from '../api';
import { undoKey } from '../hooks/useReviewScoring';
import { ReviewPage } from './ReviewPage';

const ME = { id: 5, email: 'rev@example.com', name: 'Rev', created_at: '2024-01-01T00:00:00Z' };
const SCORER = { id: 40, versionId: 41 };
const CRITERIA = ['accuracy', 'tone'];
type Entered = { criteria: Record<string, number> };

/**
 * A run of `cases` cases x 2 targets x `repeats` repeats scored with a per-criterion
 * manual scorer; `scores` holds the reviewer's scores by output id, as the server would.
 */
function serve(cases: number, repeats: number, scores: Map<number, Entered>) {
  const id = (c: number, t: number, r: number) => 2000 + c * 100 + t * 10 + r;
  const latest = { id: SCORER.versionId, scorer_id: SCORER.id, number: 1, params: { scale: 'criteria', criteria: CRITERIA }, note: null, created_by: null, created_at: ME.created_at };
  const scorer = { id: SCORER.id, name: 'Quality', kind: 'manual', description: null, archived_at: null, created_at: ME.created_at, latest, versions: [latest] };
  const mine = (oid: number) => {
    const s = scores.get(oid);
    return s ? [{ id: oid * 10, scorer_version_id: SCORER.versionId, scorer_id: SCORER.id, scorer_name: 'Quality', version: 1, kind: 'manual', source: `user:${ME.id}`, value: 0.5, passed: null, rationale: '', comment: null, error: null, author_id: ME.id, rating: null, details: { entered: { rating: null, passed: null, ...s } } }] : [];
  };
  return mockFetch(async (req) => {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path === '/api/auth/me') return json(ME);
    if (path === '/api/projects/3') return json(project('reviewer'));
    if (path === '/api/projects/3/runs/7') return json(makeRun({ status: 'completed', targets: [runTarget({ id: 11, label: 'Model A' }), runTarget({ id: 12, label: 'Model B' })], scorers: [] }));
    if (path === '/api/projects/3/scorers') return json({ items: [scorer], total: 1, page: 1, page_size: 100 });
    if (path === '/api/projects/3/runs/7/grid') {
      const rows = Array.from({ length: cases }, (_, c) => ({
        case_id: 500 + c, position: c, input: `Question ${c + 1}?`, tags: [],
        cells: [11, 12].map((target, t) => ({
          target_id: target,
          outputs: Array.from({ length: repeats }, (_, r) => ({ id: id(c, t, r), repeat: r, turn: 0, status: 'succeeded', text: `Answer ${c + 1}.${t}.${r}`, text_length: 10, error_class: null, error: null, tokens_in: 1, tokens_out: 1, cost_micros: 1, latency_ms: 1, cached: false, scores: mine(id(c, t, r)).map(({ details: _d, ...s }) => s) })),
        })),
      }));
      const page = { total: cases, offset: 0, limit: 100, rows, targets: [{ target_id: 11, label: 'Model A', model_id: 5 }, { target_id: 12, label: 'Model B', model_id: 5 }] };
      return json(page as unknown as GridPage);
    }
    if (path === `/api/projects/3/runs/7/scores/${SCORER.versionId}` && req.method === 'PUT') {
      const body = (await req.json()) as Entered & { output_ids: number[] };
      body.output_ids.forEach((o) => scores.set(o, { criteria: body.criteria }));
      return json({ items: [] });
    }
    const one = /^\/api\/projects\/3\/runs\/7\/outputs\/(\d+)\/scores\/(\d+)$/.exec(path);
    if (one) {
      if (req.method === 'PUT') scores.set(Number(one[1]), { criteria: ((await req.json()) as Entered).criteria });
      if (req.method === 'DELETE') scores.delete(Number(one[1]));
      return req.method === 'DELETE' ? new Response(null, { status: 204 }) : json({ id: 1 });
    }
    const detail = /^\/api\/projects\/3\/runs\/7\/outputs\/(\d+)$/.exec(path);
    if (detail) {
      const oid = Number(detail[1]);
      return json({ id: oid, text: `Full text of output ${oid}`, case_input: { question: 'Q' }, case_expected: null, scores: mine(oid) });
    }
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

const renderReview = () => renderWithProviders(<ReviewPage />, { route: '/projects/3/runs/7/review', path: '/projects/:projectId/runs/:runId/review' });
const position = () => screen.getByTestId('review-position');
const value = (c: string) => screen.getByTestId(`criterion-${c}-value`);

afterEach(() => sessionStorage.clear());

describe('ReviewPage per criterion, repeats, unscored filter and undo after a reload', { timeout: 30_000 }, () => {
  it('rates each criterion from the keys and one key press scores every repeat of the cell', async () => {
    const scores = new Map<number, Entered>();
    const fetch = serve(2, 3, scores);
    const user = userEvent.setup();
    renderReview();
    await waitFor(() => expect(position()).toHaveTextContent('Case 1 of 2 · output 1 of 2: Model A · 3 repeats'));
    expect(await screen.findByTestId('repeats-note')).toHaveTextContent('This cell has 3 repeats: a key scores all 3 of them at once.');
    expect(screen.getAllByText(/Answer 1\.0\.\d|Full text of output 20\d\d/)).toHaveLength(3);
    expect(screen.getByTestId('criterion-accuracy')).toHaveAttribute('aria-current', 'true');

    await user.keyboard('4'); // accuracy 4, then the keys rate tone
    expect(value('accuracy')).toHaveTextContent('4/5');
    expect(screen.getByTestId('criterion-tone')).toHaveAttribute('aria-current', 'true');
    await user.keyboard('{ArrowUp}3'); // back to accuracy: 3
    expect(value('accuracy')).toHaveTextContent('3/5');
    expect(requestsOf(fetch).filter((r) => r.method === 'PUT')).toHaveLength(0);
    await user.keyboard('5'); // tone, the last: saved for all three repeats
    await waitFor(() => expect(scores.size).toBe(3));
    expect([...scores.values()]).toEqual(Array(3).fill({ criteria: { accuracy: 3, tone: 5 } }));
    const puts = requestsOf(fetch).filter((r) => r.method === 'PUT');
    expect(puts.map((r) => new URL(r.url).pathname)).toEqual([`/api/projects/3/runs/7/scores/${SCORER.versionId}`]);
    await waitFor(() => expect(position()).toHaveTextContent('output 2 of 2: Model B'));
    expect(screen.getByTestId('criterion-accuracy')).toHaveAttribute('aria-current', 'true');
  });

  it('skips what I scored with "Only unscored by me", and undo survives a reload, restoring the server state', async () => {
    const scores = new Map<number, Entered>([[2000, { criteria: { accuracy: 2, tone: 2 } }]]); // case 1, Model A: scored before
    const fetch = serve(2, 1, scores);
    const user = userEvent.setup();
    const first = renderReview();
    await waitFor(() => expect(position()).toHaveTextContent('Case 1 of 2 · output 1 of 2: Model A'));
    await user.keyboard('u');
    expect(screen.getByRole('checkbox', { name: 'Only unscored by me' })).toBeChecked();
    await waitFor(() => expect(position()).toHaveTextContent('Case 1 of 2 · output 2 of 2: Model B'));

    await user.keyboard('{ArrowDown}4'); // tone first: accuracy still missing, nothing saved
    expect(value('tone')).toHaveTextContent('4/5');
    await user.click(within(screen.getByTestId('criterion-accuracy')).getByRole('button', { name: 'accuracy: 5' }));
    await user.keyboard('{Enter}');
    await waitFor(() => expect(scores.get(2010)).toEqual({ criteria: { accuracy: 5, tone: 4 } }));
    await waitFor(() => expect(position()).toHaveTextContent('Case 2 of 2 · output 1 of 2: Model A'));
    expect(JSON.parse(sessionStorage.getItem(undoKey(3, 7, ME.id))!)).toHaveLength(1);

    // Re-score the earlier cell, so undo must put its old value back (not delete it)
    await user.keyboard('u{ArrowLeft}{ArrowLeft}');
    await waitFor(() => expect(position()).toHaveTextContent('Case 1 of 2 · output 1 of 2: Model A'));
    await waitFor(() => expect(screen.getByTestId('my-score')).toHaveTextContent('accuracy 2, tone 2'));
    await user.keyboard('11');
    await waitFor(() => expect(scores.get(2000)).toEqual({ criteria: { accuracy: 1, tone: 1 } }));

    first.unmount(); // a reload: the stack comes back from sessionStorage
    renderReview();
    await screen.findByTestId('review-position');
    const undo = await screen.findByRole('button', { name: 'Undo' });
    await waitFor(() => expect(undo).toBeEnabled());
    await user.keyboard('{Control>}z{/Control}');
    await waitFor(() => expect(scores.get(2000)).toEqual({ criteria: { accuracy: 2, tone: 2 } }));
    await waitFor(() => expect(position()).toHaveTextContent('Case 1 of 2 · output 1 of 2: Model A'));
    await user.click(undo);
    await waitFor(() => expect(scores.has(2010)).toBe(false));
    expect(requestsOf(fetch).filter((r) => r.method === 'DELETE').map((r) => new URL(r.url).pathname)).toEqual([`/api/projects/3/runs/7/outputs/2010/scores/${SCORER.versionId}`]);
    expect(JSON.parse(sessionStorage.getItem(undoKey(3, 7, ME.id))!)).toEqual([]);
    await waitFor(() => expect(screen.getByRole('button', { name: 'Undo' })).toBeDisabled());
  });
});
