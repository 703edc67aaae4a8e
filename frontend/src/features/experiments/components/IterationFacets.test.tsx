import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { IterationFacets } from './IterationFacets';

const mean = (m: number, low: number | null, high: number | null, n: number) => ({ mean: m, low, high, n_cases: n, n_values: n, confidence: 0.95 });
const group = (key: string, m: number, low: number | null, high: number | null, n: number) => ({
  key, n_outputs: n, n_cases: n, mean: mean(m, low, high, n), pass_rate: { k: 0, n: 0, estimate: null, low: null, high: null, confidence: 0.95 },
});
// Each split answers with its own numbers, so the test sees which one is shown.
const BY_SPLIT = {
  all: { cases: null, billing: group('billing', 0.65, 0.4, 0.85, 5) },
  refinement: { cases: 5, billing: group('billing', 0.72, 0.55, 0.9, 3) },
  holdout: { cases: 3, billing: group('billing', 0.2, null, null, 1) },
} as const;

function serve() {
  return mockFetch((req) => {
    const url = new URL(req.url);
    if (url.pathname !== '/api/projects/3/experiments/5/iterations/2/facets') return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
    const split = (url.searchParams.get('split') ?? 'all') as keyof typeof BY_SPLIT;
    const s = BY_SPLIT[split];
    return json({
      number: 2, split, length_of: 'input', split_cases: s.cases,
      models: [{ label: 'Fake mini (temperature=0.2)', n_cases: 5, by_tag: [s.billing], by_length: [], by_difficulty: [] }],
    });
  });
}

const splits = (fetch: ReturnType<typeof mockFetch>) => requestsOf(fetch).map((r) => new URL(r.url).searchParams.get('split'));
const cell = () => within(screen.getByRole('table', { name: /Mean score by model and tag/ })).getAllByRole('cell')[0];

describe('IterationFacets', () => {
  it('starts on all cases, and each split shows its own means with their intervals', async () => {
    const fetch = serve();
    renderWithProviders(<IterationFacets projectId={3} experimentId={5} number={2} status="awaiting_review" />);
    await waitFor(() => expect(cell()).toHaveTextContent('0.65[0.40, 0.85]n=5'));
    expect(screen.getByRole('radio', { name: 'All cases' })).toBeChecked();
    expect(screen.getByRole('group', { name: 'Cases' })).toBeInTheDocument();
    expect(screen.getByRole('rowheader', { name: 'Fake mini (temperature=0.2)' })).toBeInTheDocument();

    await userEvent.click(screen.getByRole('radio', { name: 'Held-out set' }));
    await waitFor(() => expect(cell()).toHaveTextContent('0.20no intervaln=1'));
    expect(screen.getByTestId('facet-split-summary')).toHaveTextContent('Held-out set (never shown to the refiner): 3 cases');
    expect(screen.getByRole('radio', { name: 'Held-out set' })).toBeChecked();
    expect(splits(fetch)).toEqual(['all', 'holdout']);
  });

  it('is operable from the keyboard: Tab reaches the chosen split, arrows move it', async () => {
    const fetch = serve();
    renderWithProviders(<IterationFacets projectId={3} experimentId={5} number={2} />);
    await waitFor(() => expect(cell()).toHaveTextContent('0.65'));
    await userEvent.tab();
    expect(screen.getByRole('radio', { name: 'All cases' })).toHaveFocus();
    await userEvent.keyboard('{ArrowLeft}');
    expect(screen.getByRole('radio', { name: 'Held-out set' })).toBeChecked();
    await userEvent.keyboard('{ArrowLeft}');
    const refinement = screen.getByRole('radio', { name: 'Refinement set' });
    expect(refinement).toBeChecked();
    expect(refinement).toHaveFocus();
    await waitFor(() => expect(cell()).toHaveTextContent('0.72[0.55, 0.90]n=3'));
    expect(screen.getByTestId('facet-split-summary')).toHaveTextContent('Refinement set (the cases the refiner sees): 5 cases');
    expect(splits(fetch)).toContain('refinement');
  });

  it('says so before the iteration is aggregated, and shows a server error with a retry', async () => {
    mockFetch(() => json({ number: 2, split: 'all', length_of: 'input', split_cases: null, models: [] }));
    const { unmount } = renderWithProviders(<IterationFacets projectId={3} experimentId={5} number={2} />);
    expect(await screen.findByText('Facets appear once this iteration is aggregated.')).toBeInTheDocument();
    unmount();
    mockFetch(() => json({ code: 'VALIDATION_ERROR', status: 422, message: "Unknown split 'x'", errors: {} }, 422));
    renderWithProviders(<IterationFacets projectId={3} experimentId={5} number={2} />);
    expect(await screen.findByRole('alert')).toHaveTextContent('Facets could not be loaded');
    expect(screen.getByRole('button', { name: 'Try again' })).toBeInTheDocument();
  });
});
