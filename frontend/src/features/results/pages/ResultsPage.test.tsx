import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderWithProviders, requestsOf } from '@/test/utils';
import { ResultsGrid, ROW_HEIGHT } from '../components/ResultsGrid';
import { NO_FILTERS } from '../api';
import { gridRun, installScrollTo, MANUAL, outputId, serveGrid, type GridState } from '../testFixtures';
import { ResultsPage } from './ResultsPage';

const state = (over: Partial<GridState> = {}): GridState => ({ rows: 25_000, run: gridRun(), scale: '1-5', role: 'reviewer', manual: new Map(), ...over });
const renderPage = () => renderWithProviders(<ResultsPage />, { route: '/projects/3/runs/7/results', path: '/projects/:projectId/runs/:runId/results' });
const cell = (row: number, col: number) => document.querySelector<HTMLElement>(`[data-cell="${row}:${col}"]`);
const gridRequests = (fetch: ReturnType<typeof serveGrid>) => requestsOf(fetch).map((r) => new URL(r.url)).filter((u) => u.pathname.endsWith('/grid'));

beforeAll(installScrollTo);

describe('ResultsGrid', { timeout: 30_000 }, () => {
  it('keeps only a window of 100,000 cells in the DOM and follows the scroll, fetching the rows it reaches', async () => {
    const fetch = serveGrid(state());
    renderWithProviders(<ResultsGrid projectId={3} runId={7} filters={NO_FILTERS} active={{ row: 0, col: 1 }} onActiveChange={() => {}} onExpand={() => {}} />);
    const grid = await screen.findByRole('grid', { name: /Results/ });
    expect(grid).toHaveAttribute('aria-rowcount', '25001');
    expect(grid).toHaveAttribute('aria-colcount', '5');
    expect(await screen.findByText('Question 1?')).toBeInTheDocument();
    const rendered = within(grid).getAllByRole('gridcell').length;
    expect(rendered).toBeGreaterThan(0);
    expect(rendered).toBeLessThan(100); // of 100,000
    expect(screen.queryByText('Question 500?')).not.toBeInTheDocument();

    const scroller = screen.getByTestId('grid-scroll');
    act(() => {
      scroller.scrollTop = ROW_HEIGHT * 12_000;
      fireEvent.scroll(scroller);
    });
    expect(await screen.findByText('Question 12001?')).toBeInTheDocument();
    expect(screen.queryByText('Question 1?')).not.toBeInTheDocument();
    expect(within(grid).getAllByRole('gridcell').length).toBeLessThan(100);
    // rows 12,000.. live on page 121 (offset 12,000): fetched, and nothing before it but the first page
    const offsets = gridRequests(fetch).map((u) => Number(u.searchParams.get('offset')));
    expect(offsets).toContain(12_000);
    expect(offsets.filter((o) => o > 0 && o < 11_900)).toEqual([]);
    const row = screen.getByText('Question 12001?').closest('[role="row"]')!;
    expect(row).toHaveAttribute('aria-rowindex', '12002');
    expect(within(row as HTMLElement).getByText('Answer 12001 from 0')).toBeInTheDocument();
  });
});

describe('ResultsPage', { timeout: 30_000 }, () => {
  it('moves between cells with the keyboard (roving tabindex) and opens an output with Enter', async () => {
    serveGrid(state());
    const user = userEvent.setup();
    renderPage();
    await screen.findByText('Answer 1 from 0');
    const first = cell(0, 1)!;
    expect(first).toHaveAttribute('tabindex', '0');
    expect(document.querySelectorAll('[role="grid"] [tabindex="0"]')).toHaveLength(1);
    act(() => first.focus());

    await user.keyboard('{ArrowRight}');
    expect(cell(0, 2)).toHaveFocus();
    expect(cell(0, 2)).toHaveAttribute('tabindex', '0');
    expect(cell(0, 1)).toHaveAttribute('tabindex', '-1');
    await user.keyboard('{ArrowDown}{ArrowDown}');
    expect(cell(2, 2)).toHaveFocus();
    await user.keyboard('{End}');
    expect(cell(2, 4)).toHaveFocus();
    await user.keyboard('{ArrowRight}'); // the last column: stays
    expect(cell(2, 4)).toHaveFocus();
    await user.keyboard('{Home}');
    expect(cell(2, 0)).toHaveFocus();
    await user.keyboard('{ArrowUp}{ArrowUp}{ArrowUp}'); // the first row: stays
    expect(cell(0, 0)).toHaveFocus();
    await user.keyboard('{PageDown}'); // row 10 is out of view: scrolled in, then focused
    await waitFor(() => expect(cell(10, 0)).toHaveFocus());

    // the focused cell's judge rationale is shown (and describes it) without a mouse
    await user.keyboard('{ArrowRight}');
    await waitFor(() => expect(cell(10, 1)).toHaveFocus());
    expect(cell(10, 1)).toHaveAttribute('aria-describedby', 'grid-active-details');
    expect(screen.getByTestId('grid-active-details')).toHaveTextContent('Rationale for case 11 on target 0');

    // Ctrl+End: the last cell of 25,000 rows, scrolled into view and focused
    await user.keyboard('{Control>}{End}{/Control}');
    await waitFor(() => expect(cell(24_999, 4)).toHaveFocus());

    await user.keyboard('{Control>}{Home}{/Control}');
    await waitFor(() => expect(cell(0, 0)).toHaveFocus());
    await user.keyboard('{ArrowRight}{Enter}');
    const dialog = await screen.findByRole('dialog');
    expect(await within(dialog).findByText(`Full text of output ${outputId(0, 0)}`)).toBeInTheDocument();
  });

  it('filters by error class and by target, asking the server for them', async () => {
    const fetch = serveGrid(state({ rows: 40 }));
    const user = userEvent.setup();
    renderPage();
    await screen.findByText('Question 1?');
    await user.type(screen.getByLabelText('Error class'), 'timeout');
    await waitFor(() => expect(screen.queryByText('Question 1?')).not.toBeInTheDocument());
    expect(screen.getByText('Question 2?')).toBeInTheDocument();
    expect(screen.getByText('Question 7?')).toBeInTheDocument();
    expect(screen.getByRole('grid')).toHaveAttribute('aria-rowcount', '9'); // 8 rows + the header
    expect(gridRequests(fetch).some((u) => u.searchParams.get('error_class') === 'timeout')).toBe(true);

    await user.click(screen.getByRole('checkbox', { name: 'Model B' }));
    await waitFor(() => expect(screen.getByRole('grid')).toHaveAttribute('aria-colcount', '4'));
    expect(screen.queryByRole('columnheader', { name: 'Model B' })).not.toBeInTheDocument();
    expect(gridRequests(fetch).at(-1)!.searchParams.get('target_ids')).toBe('11,13,14');

    // a reversed score range is said here and never sent
    await user.type(screen.getByLabelText('Score from'), '0.9');
    await user.type(screen.getByLabelText('to'), '0.1');
    expect(await screen.findByRole('alert')).toHaveTextContent('The lowest score is above the highest.');
    await new Promise((r) => setTimeout(r, 400));
    expect(gridRequests(fetch).some((u) => u.searchParams.has('score_min'))).toBe(false);
  });

  it('scores the focused cell with the keys and undoes it', async () => {
    const s = state({ rows: 30 });
    const fetch = serveGrid(s);
    const user = userEvent.setup();
    renderPage();
    await screen.findByText('Answer 1 from 0');
    expect(await screen.findByRole('combobox', { name: 'Score with' })).toHaveValue(String(MANUAL.versionId));
    act(() => cell(0, 1)!.focus());
    await user.keyboard('4');
    await waitFor(() => expect(s.manual.get(outputId(0, 0))).toEqual({ rating: 4, passed: null }));
    expect(await within(cell(0, 1)!).findByText('You: rating 4')).toBeInTheDocument();
    await user.keyboard('{ArrowRight}.');
    await waitFor(() => expect(s.manual.get(outputId(0, 1))).toEqual({ rating: 5, passed: true }));
    await user.click(screen.getByRole('button', { name: 'Undo' }));
    await waitFor(() => expect(s.manual.has(outputId(0, 1))).toBe(false));
    const deletes = requestsOf(fetch).filter((r) => r.method === 'DELETE');
    expect(new URL(deletes[0].url).pathname).toBe(`/api/projects/3/runs/7/outputs/${outputId(0, 1)}/scores/${MANUAL.versionId}`);
    await user.keyboard('{Control>}z{/Control}');
    await waitFor(() => expect(s.manual.has(outputId(0, 0))).toBe(false));

    // case 2's fourth target timed out: no reply, nothing sent, and the reason is said
    act(() => cell(1, 4)!.focus());
    await user.keyboard('3');
    expect(await screen.findByText(/Not scored: this output is failed/)).toBeInTheDocument();
    expect(requestsOf(fetch).filter((r) => r.method === 'PUT' && r.url.includes(`/outputs/${outputId(1, 3)}/`))).toHaveLength(0);
  });
  it('refuses a key based on a score another tab changed, keeps that score, and overwrites it only on Keep mine', async () => {
    const s = state({ rows: 30 });
    const fetch = serveGrid(s);
    const user = userEvent.setup();
    renderPage();
    await screen.findByText('Answer 1 from 0');
    expect(await screen.findByRole('combobox', { name: 'Score with' })).toHaveValue(String(MANUAL.versionId));
    // another tab scored this output after the grid was read
    s.manual.set(outputId(0, 0), { rating: 2, passed: null });
    s.versions = new Map([[outputId(0, 0), 3]]);
    act(() => cell(0, 1)!.focus());
    await user.keyboard('4');
    const notice = await screen.findByText(/This was changed elsewhere/);
    expect(s.manual.get(outputId(0, 0))).toEqual({ rating: 2, passed: null });
    const puts = requestsOf(fetch).filter((r) => r.method === 'PUT');
    expect(puts[0].headers.get('If-Match')).toBe('"0"');
    await user.click(within(notice.closest('[role="alert"]') as HTMLElement).getByRole('button', { name: 'Keep mine' }));
    await waitFor(() => expect(s.manual.get(outputId(0, 0))).toEqual({ rating: 4, passed: null }));
    expect(requestsOf(fetch).filter((r) => r.method === 'PUT').at(-1)!.headers.get('If-Match')).toBe('"3"');
    await waitFor(() => expect(screen.queryByText(/This was changed elsewhere/)).not.toBeInTheDocument());
  });
  it('keeps its undo across a reload, and an undo based on a score changed since (another tab) removes nothing', async () => {
    sessionStorage.clear();
    const s = state({ rows: 30 });
    const fetch = serveGrid(s);
    const user = userEvent.setup();
    const first = renderPage();
    await screen.findByText('Answer 1 from 0');
    expect(await screen.findByRole('combobox', { name: 'Score with' })).toHaveValue(String(MANUAL.versionId));
    act(() => cell(0, 1)!.focus());
    await user.keyboard('4');
    await waitFor(() => expect(s.manual.get(outputId(0, 0))).toEqual({ rating: 4, passed: null }));
    await user.keyboard('{ArrowRight}3');
    await waitFor(() => expect(s.manual.get(outputId(0, 1))).toEqual({ rating: 3, passed: null }));
    first.unmount();

    // the page is loaded again: its undo stack is still there
    renderPage();
    await screen.findByText('Answer 1 from 0');
    const undo = await screen.findByRole('button', { name: 'Undo' });
    await waitFor(() => expect(undo).toBeEnabled());
    await user.click(undo);
    await waitFor(() => expect(s.manual.has(outputId(0, 1))).toBe(false));
    const del = requestsOf(fetch).filter((r) => r.method === 'DELETE').at(-1)!;
    expect(del.headers.get('If-Match')).toBe('"1"'); // the version this tab saved

    // another tab re-scores the first output: undoing this tab's score of it is refused
    s.manual.set(outputId(0, 0), { rating: 1, passed: null });
    s.versions = new Map([[outputId(0, 0), 5]]);
    await waitFor(() => expect(screen.getByRole('button', { name: 'Undo' })).toBeEnabled());
    await user.click(screen.getByRole('button', { name: 'Undo' }));
    expect(await screen.findByText(/This was changed elsewhere/)).toBeInTheDocument();
    expect(s.manual.get(outputId(0, 0))).toEqual({ rating: 1, passed: null });
    expect(requestsOf(fetch).filter((r) => r.method === 'DELETE').at(-1)!.headers.get('If-Match')).toBe('"1"');
  });
});
