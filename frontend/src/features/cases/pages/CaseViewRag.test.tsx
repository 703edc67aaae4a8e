import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { json, mockFetch, renderWithProviders } from '@/test/utils';
import { caseOutput, caseView } from '../testFixtures';
import type { CaseView } from '../api';
import { CaseViewPage } from './CaseViewPage';

const PATH = '/projects/:projectId/runs/:runId/cases/:caseId';
const ts = '2026-11-22T05:00:00Z';
const doc = { id: 7, name: 'handbook.md', mime: 'text/markdown', size_bytes: 900, pages: null, characters: 880, chunks: 6, chunk_size: 200, chunk_overlap: 20, created_by: 1, created_at: ts };
const warranty = { chunk_id: 41, document_id: 7, position: 1, text: 'The warranty lasts two years.', score: 3.1 };
const refunds = { chunk_id: 40, document_id: 7, position: 0, text: 'Refunds are paid within 30 days.', score: 0.5 };
const shipping = { chunk_id: 42, document_id: 7, position: 2, text: 'Orders ship from Rotterdam.', score: 0.2 };

function ragView(expected: Record<string, unknown>): CaseView {
  return caseView({
    case: { id: 11, input: { question: 'How long is the warranty?' }, expected, trace: null, tags: [], difficulty: null, metadata: {} },
    targets: [
      { target_id: 1, label: 'Copier', model_id: 1, outputs: [caseOutput({ text: 'Two years.', retrieved: [warranty, refunds] })] },
      { target_id: 2, label: 'Contradicter', model_id: 2, outputs: [caseOutput({ target_id: 2, label: 'Contradicter', text: 'Ten years.', retrieved: [shipping] })] },
    ],
  });
}

function serve(view: CaseView) {
  return mockFetch((req) => {
    const path = new URL(req.url).pathname;
    if (path === '/api/projects/3/runs/7/cases/11') return json(view);
    if (path === '/api/projects/3/documents') return json({ items: [doc], total: 1, page: 1, page_size: 100 });
    return json({ status: 404, code: 'NOT_FOUND', message: 'Nope' }, 404);
  });
}

afterEach(() => vi.unstubAllGlobals());

describe('CaseViewPage, answers from documents', () => {
  it("shows each answer's retrieved chunks and the ground truth's source chunks, marking the overlap", async () => {
    serve(ragView({ answer: 'Two years', source_chunks: [41, 43] }));
    renderWithProviders(<CaseViewPage />, { route: '/projects/3/runs/7/cases/11', path: PATH });
    const columns = within(await screen.findByTestId('side-by-side'));
    const copier = columns.getByRole('region', { name: 'Copier' });
    const context = within(copier).getByTestId('retrieved-context');
    expect(context).toHaveTextContent('Context (2 chunks) · 1 of 2 ground-truth sources retrieved');
    await userEvent.click(within(context).getByText(/Context \(2 chunks\)/));
    expect(await within(copier).findAllByText('handbook.md')).toHaveLength(2); // names, once the documents load
    const chunks = within(copier).getAllByTestId('retrieved-chunk');
    expect(chunks[0]).toHaveTextContent(/handbook\.md.*chunk 2.*ground-truth source/);
    expect(chunks[1]).not.toHaveTextContent('ground-truth source');

    const other = within(columns.getByRole('region', { name: 'Contradicter' })).getByTestId('retrieved-context');
    expect(other).toHaveTextContent('Context (1 chunk) · 0 of 2 ground-truth sources retrieved');

    const sources = within(screen.getByTestId('truth-sources'));
    const items = sources.getAllByRole('listitem');
    expect(items[0]).toHaveTextContent('handbook.md · chunk 2 · retrieved for Copier');
    expect(items[0]).toHaveTextContent('The warranty lasts two years.');
    expect(items[1]).toHaveTextContent('Chunk id 43 · retrieved for no answer');
  });

  it('reads per-turn sources of a conversation, and shows no sources section when none are recorded', async () => {
    serve(ragView({ answer: 'Two years' }));
    const { unmount } = renderWithProviders(<CaseViewPage />, { route: '/projects/3/runs/7/cases/11', path: PATH });
    const columns = within(await screen.findByTestId('side-by-side'));
    const summary = within(columns.getByRole('region', { name: 'Copier' })).getByTestId('retrieved-context').querySelector('summary');
    expect(summary).toHaveTextContent(/^Context \(2 chunks\)$/);
    expect(screen.queryByTestId('truth-sources')).toBeNull();
    unmount();
    vi.unstubAllGlobals();

    serve(ragView({ turns: ['Two years'], source_chunks: [[41]] }));
    renderWithProviders(<CaseViewPage />, { route: '/projects/3/runs/7/cases/11', path: PATH });
    const sources = within(await screen.findByTestId('truth-sources'));
    expect(sources.getByRole('listitem')).toHaveTextContent('retrieved for Copier');
  });
});
