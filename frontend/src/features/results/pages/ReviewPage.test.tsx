import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { renderWithProviders, requestsOf } from '@/test/utils';
import { gridRun, MANUAL, outputId, serveGrid, type GridState } from '../testFixtures';
import { ReviewPage } from './ReviewPage';

const state = (over: Partial<GridState> = {}): GridState => ({ rows: 3, run: gridRun(), scale: '1-5', role: 'reviewer', manual: new Map(), ...over });
const renderReview = () => renderWithProviders(<ReviewPage />, { route: '/projects/3/runs/7/review', path: '/projects/:projectId/runs/:runId/review' });
const position = () => screen.getByTestId('review-position');

describe('ReviewPage', { timeout: 30_000 }, () => {
  it('scores output by output with . , and numbers, moves on after each, and undoes back', async () => {
    const s = state();
    const fetch = serveGrid(s);
    const user = userEvent.setup();
    renderReview();
    expect(await screen.findByText(`Full text of output ${outputId(0, 0)}`)).toBeInTheDocument();
    expect(position()).toHaveTextContent('Case 1 of 3 · output 1 of 4: Model A');
    expect(await screen.findByRole('combobox', { name: 'Score with' })).toHaveValue(String(MANUAL.versionId));

    await user.keyboard('4');
    await waitFor(() => expect(s.manual.get(outputId(0, 0))).toEqual({ rating: 4, passed: null }));
    await waitFor(() => expect(position()).toHaveTextContent('output 2 of 4: Model B'));
    await user.keyboard('.');
    await waitFor(() => expect(s.manual.get(outputId(0, 1))).toEqual({ rating: 5, passed: true }));
    await waitFor(() => expect(position()).toHaveTextContent('output 3 of 4: Model C'));
    await user.keyboard(',');
    await waitFor(() => expect(s.manual.get(outputId(0, 2))).toEqual({ rating: 1, passed: false }));
    await waitFor(() => expect(position()).toHaveTextContent('output 4 of 4: Model D'));
    const puts = requestsOf(fetch).filter((r) => r.method === 'PUT');
    expect(puts.map((r) => new URL(r.url).pathname)).toEqual([0, 1, 2].map((t) => `/api/projects/3/runs/7/outputs/${outputId(0, t)}/scores/${MANUAL.versionId}`));

    // Ctrl+Z takes back the last score (it had none before: DELETE) and returns to it
    await user.keyboard('{Control>}z{/Control}');
    await waitFor(() => expect(s.manual.has(outputId(0, 2))).toBe(false));
    await waitFor(() => expect(position()).toHaveTextContent('output 3 of 4: Model C'));
    expect(requestsOf(fetch).filter((r) => r.method === 'DELETE')).toHaveLength(1);

    // re-scoring a scored output, then undoing, restores the value before (PUT), not a delete
    await user.keyboard('{ArrowLeft}{ArrowLeft}');
    await waitFor(() => expect(position()).toHaveTextContent('output 1 of 4: Model A'));
    expect(await screen.findByTestId('my-score')).toHaveTextContent('rating 4');
    await user.keyboard('2');
    await waitFor(() => expect(s.manual.get(outputId(0, 0))).toEqual({ rating: 2, passed: null }));
    await user.click(screen.getByRole('button', { name: 'Undo' }));
    await waitFor(() => expect(s.manual.get(outputId(0, 0))).toEqual({ rating: 4, passed: null }));
    expect(requestsOf(fetch).filter((r) => r.method === 'DELETE')).toHaveLength(1);
    expect(position()).toHaveTextContent('output 1 of 4: Model A');
  });

  it('moves past the last output of a case to the next case, and skips outputs without a reply', async () => {
    serveGrid(state());
    const user = userEvent.setup();
    renderReview();
    await screen.findByText(`Full text of output ${outputId(0, 0)}`);
    await user.keyboard('{ArrowRight}{ArrowRight}{ArrowRight}{ArrowRight}');
    // case 2's fourth target timed out: 3 outputs to score
    await waitFor(() => expect(position()).toHaveTextContent('Case 2 of 3 · output 1 of 3: Model A'));
  });

  it('scores pass/fail scorers with . and , only, and lists the shortcuts under ?', async () => {
    const s = state({ scale: 'pass_fail' });
    serveGrid(s);
    const user = userEvent.setup();
    renderReview();
    await screen.findByText(`Full text of output ${outputId(0, 0)}`);
    await screen.findByRole('combobox', { name: 'Score with' });
    await user.keyboard('3'); // not a pass/fail key: nothing saved
    await user.keyboard(',');
    await waitFor(() => expect(s.manual.get(outputId(0, 0))).toEqual({ rating: null, passed: false }));
    expect(screen.queryByRole('button', { name: 'Rate 3' })).not.toBeInTheDocument();
    await user.keyboard('?');
    const help = await screen.findByRole('dialog', { name: 'Keyboard shortcuts' });
    expect(within(help).getByText(/Approve: pass/)).toBeInTheDocument();
    expect(within(help).getByText(/Undo the last score/)).toBeInTheDocument();
  });

  it('says when the project has no manual scorer and how to add one', async () => {
    serveGrid(state({ run: gridRun({ scorers: [] }), noScorers: true }));
    renderReview();
    expect(await screen.findByTestId('no-manual-scorer')).toHaveTextContent('This project has no manual scorer');
    const link = within(screen.getByTestId('no-manual-scorer')).getByRole('link', { name: 'New scorer' });
    expect(link).toHaveAttribute('href', '/projects/3/scorers/new');
    expect(screen.getByTestId('no-manual-scorer')).not.toHaveTextContent('POST /api');
  });

  it('offers a manual scorer the run did not pin', async () => {
    serveGrid(state({ run: gridRun({ scorers: [] }) }));
    renderReview();
    const select = await screen.findByRole('combobox', { name: 'Score with' });
    expect(within(select).getByRole('option', { name: /Helpfulness \(rating 1–5\) — not pinned by this run/ })).toBeInTheDocument();
  });
});
