import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders } from '@/test/utils';
import { NO_FILTERS, type GridRow } from '../api';
import { installScrollTo } from '../testFixtures';
import { COLUMN_WIDTH, ResultsGrid } from './ResultsGrid';

beforeAll(installScrollTo);

const turn = (n: number, prompt: string) => ({
  id: 900 + n, repeat: 0, turn: n, prompt, status: 'succeeded' as const, text: `Reply to turn ${n + 1}`, text_length: 16, error_class: null, error: null,
  tokens_in: 10, tokens_out: 5, cost_micros: 12, latency_ms: 300, cached: false, retrieved: null,
  scores: [{ id: 1, scorer_version_id: 2, scorer_id: 3, scorer_name: 'Helpfulness', version: 1, kind: 'manual', source: 'user:1', value: 0.75, passed: null, rationale: '', comment: null, error: null, author_id: 1, rating: 4, row_version: 1 }],
});

const doc = { id: 7, name: 'handbook.md', mime: 'text/markdown', size_bytes: 900, pages: null, characters: 880, chunks: 6, chunk_size: 200, chunk_overlap: 20, created_by: 1, created_at: '2024-01-01T00:00:00Z' };

function serve(rows: GridRow[], targets = [{ target_id: 11, label: 'Model A', model_id: 5 }]) {
  return mockFetch((req) => {
    if (new URL(req.url).pathname === '/api/projects/3/documents') return json({ items: [doc], total: 1, page: 1, page_size: 100 });
    if (new URL(req.url).pathname.endsWith('/grid')) return json({ total: rows.length, offset: 0, limit: 50, targets, rows });
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

const render = () =>
  renderWithProviders(<ResultsGrid projectId={3} runId={7} filters={NO_FILTERS} active={{ row: 0, col: 1 }} onActiveChange={() => {}} onExpand={() => {}} initialRect={{ width: 1200, height: 576 }} />);

describe('ResultsGrid cells', () => {
  it('a conversation cell names the turn its reply answers, beside the first user turn', async () => {
    const outputs = [turn(0, 'First question'), turn(1, 'Second question'), turn(2, 'Last question')];
    serve([{ case_id: 500, position: 0, number: 1, input: 'First question', turns: 3, tags: [], cells: [{ target_id: 11, outputs }] }]);
    render();
    const row = (await screen.findByText('Reply to turn 1')).closest('[role="row"]') as HTMLElement;
    expect(within(row).getByTestId('case-turns')).toHaveTextContent('3 turns, from turn 1');
    expect(within(row).getByRole('rowheader')).toHaveTextContent('First question');
    expect(within(row).getByTestId('cell-turn')).toHaveTextContent('Turn 1 of 3: First question');
    expect(within(row).getByText('+2 more')).toBeInTheDocument();
    expect(within(row).getByText('Helpfulness 4/5')).toBeInTheDocument();
  });

  it('a single-turn cell has no turn line; columns share the width there is', async () => {
    serve([{ case_id: 500, position: 0, number: 1, input: 'Question?', turns: 1, tags: [], cells: [{ target_id: 11, outputs: [{ ...turn(0, ''), prompt: null }] }] }]);
    render();
    const cell = (await screen.findByText('Reply to turn 1')).closest('[role="gridcell"]') as HTMLElement;
    expect(within(cell).queryByTestId('cell-turn')).toBeNull();
    // 1200 px wide, a 280 px case column, one target: it takes the rest, not a fixed 320 px
    expect(parseInt(cell.style.width, 10)).toBeGreaterThan(COLUMN_WIDTH);
  });

  it('an answer from documents shows "Context (k)" in its cell and the chunks, expandable, for the focused cell', async () => {
    const long = `The warranty lasts two years and covers parts and labour. ${'Batteries are covered for six months. '.repeat(10)}`;
    const retrieved = [
      { chunk_id: 41, document_id: 7, position: 1, text: long, score: 3.2 },
      { chunk_id: 40, document_id: 7, position: 0, text: 'Refunds are paid within 30 days.', score: 0.4 },
    ];
    serve([{ case_id: 500, position: 0, number: 1, input: 'How long is the warranty?', turns: 1, tags: [], cells: [{ target_id: 11, outputs: [{ ...turn(0, ''), prompt: null, retrieved }] }] }]);
    render();
    const cell = (await screen.findByText('Reply to turn 1')).closest('[role="gridcell"]') as HTMLElement;
    expect(within(cell).getByTestId('cell-context')).toHaveTextContent('Context (2)');
    const details = screen.getByTestId('grid-active-details');
    const summary = within(details).getByText('Context (2 chunks)');
    // a native disclosure (details/summary): the browser makes it focusable and opens it on Enter or Space
    expect(summary.closest('summary')).not.toBeNull();
    await userEvent.click(summary);
    expect(within(details).getByTestId('retrieved-context')).toHaveAttribute('open');
    const chunks = await within(details).findAllByTestId('retrieved-chunk');
    expect(chunks).toHaveLength(2);
    expect(chunks[0]).toHaveTextContent('handbook.md');
    expect(chunks[0]).toHaveTextContent('chunk 2');
    expect(chunks[1]).toHaveTextContent('chunk 1');
    expect(chunks[0].textContent).not.toContain(long.trim());
    await userEvent.click(within(chunks[0]).getByRole('button', { name: 'Show the whole chunk' }));
    expect(chunks[0]).toHaveTextContent(long.trim());
  });

  it('an output without documents has no context line', async () => {
    serve([{ case_id: 500, position: 0, number: 1, input: 'Question?', turns: 1, tags: [], cells: [{ target_id: 11, outputs: [{ ...turn(0, ''), prompt: null }] }] }]);
    render();
    const cell = (await screen.findByText('Reply to turn 1')).closest('[role="gridcell"]') as HTMLElement;
    expect(within(cell).queryByTestId('cell-context')).toBeNull();
    expect(screen.queryByTestId('retrieved-context')).toBeNull();
  });
});
