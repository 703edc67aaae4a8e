import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { renderProject } from '@/test/project';
import type { RagSummary } from '../api';
import { serveReports } from '../testFixtures';

const R = '/api/projects/3/reports';
const datasets = { items: [], total: 0, page: 1, page_size: 100 };
const scorers = { items: [{ id: 12, name: 'RAG', kind: 'rag_metrics', description: '', archived_at: null, created_at: '2026-11-20T10:00:00Z', latest: null }], total: 1, page: 1, page_size: 100 };
const m = (mean: number | null, low: number | null, high: number | null) => ({ mean, low, high, n_cases: 2, n_values: 2 });

const summary = (): RagSummary => ({
  scorer: { id: 12, name: 'RAG', kind: 'rag_metrics', versions: [1] },
  metrics: ['groundedness', 'relevance', 'coherence', 'fluency'],
  confidence: 0.95,
  items: [
    {
      model_id: 1,
      model_name: 'Fake Smart',
      judgements: 3,
      outputs: 2,
      failed_calls: 0,
      answers_from_documents: false,
      success_rate: { k: 2, n: 3, rate: 2 / 3, low: 0.2077, high: 0.9385 },
      metrics: [
        { name: 'groundedness', ...m(4, 3, 5) },
        { name: 'relevance', ...m(3, 3, 3) },
        { name: 'coherence', ...m(4, 4, 4) },
        { name: 'fluency', ...m(5, 5, 5) },
      ],
      average: m(4, 3.75, 4.25),
      latency_p50_ms: 100,
      latency_p95_ms: 300,
    },
  ],
});

describe('RagPage', () => {
  it('shows each metric’s mean with its interval, success rate and latency per model', async () => {
    serveReports({ [`${R}/rag`]: summary(), '/api/projects/3/scorers': scorers, '/api/projects/3/datasets': datasets });
    renderProject('/projects/3/reports/rag');
    const region = await screen.findByRole('region', { name: 'RAG metrics by model' });
    expect(region).toHaveTextContent("RAG (version 1): the judges' average");
    await userEvent.click(within(region).getByRole('button', { name: 'Show as table' }));
    const rows = within(within(region).getByRole('table')).getAllByRole('row');
    expect(Array.from(rows[1]!.children).map((c) => c.textContent)).toEqual([
      'Fake Smart',
      '4.00 [3.00, 5.00]',
      '3.00 [3.00, 3.00]',
      '4.00 [4.00, 4.00]',
      '5.00 [5.00, 5.00]',
      '4.00 [3.75, 4.25]',
      '66.7% [20.8%, 93.8%] · 2 of 3',
      '100 ms',
      '300 ms',
      '2',
    ]);
  });

  it('says when there is no RAG scorer, or no RAG scores in scope', async () => {
    serveReports({ [`${R}/rag`]: { ...summary(), scorer: null, items: [] }, '/api/projects/3/scorers': scorers, '/api/projects/3/datasets': datasets });
    const { unmount } = renderProject('/projects/3/reports/rag');
    expect(await screen.findByText('No RAG metrics scorer')).toBeInTheDocument();
    unmount();
    serveReports({ [`${R}/rag`]: { ...summary(), items: [] }, '/api/projects/3/scorers': scorers, '/api/projects/3/datasets': datasets });
    renderProject('/projects/3/reports/rag');
    expect(await screen.findByText('No RAG scores in this scope')).toBeInTheDocument();
  });
});
