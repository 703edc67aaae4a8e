import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { comparisons, facets, noComparisons, runsPage, serveReports, statistics } from '../testFixtures';

const RUN = '/api/projects/3/runs/77';

function serve(over: Record<string, unknown> = {}) {
  return serveReports({
    '/api/projects/3/runs': runsPage(),
    [`${RUN}/statistics`]: statistics(),
    [`${RUN}/statistics/facets`]: facets(),
    [`${RUN}/comparisons/summary`]: comparisons(),
    ...over,
  });
}

const cells = (table: HTMLElement) =>
  within(table)
    .getAllByRole('row')
    .slice(1)
    .map((r) => Array.from(r.children).map((c) => c.textContent));

async function tableOf(name: string) {
  const region = await screen.findByRole('region', { name });
  await userEvent.click(within(region).getByRole('button', { name: 'Show as table' }));
  return cells(within(region).getByRole('table'));
}

describe('RunReportPage', () => {
  it('breaks the newest run down: target means with intervals and each criterion', async () => {
    const fetch = serve();
    renderProject('/projects/3/reports/runs');
    expect(await tableOf('Mean score per target')).toEqual([
      ['Fake Smart', '0.80', '[0.70, 0.90]', '66.7% [20.8%, 93.8%]', '3 of 3'],
      ['Fake Fast', '0.40', '[0.20, 0.60]', '50.0% [9.4%, 90.5%]', '2 of 3'],
    ]);
    expect(await tableOf('Per-criterion breakdown')).toEqual([
      ['accuracy', 'Fake Smart', '4.50', '4.00', '5.00', '0.50', '3'],
      ['clarity', 'Fake Smart', '3.00', '2.00', '4.00', '0.82', '3'],
      ['accuracy', 'Fake Fast', '2.00', '1.00', '3.00', '1.00', '2'],
    ]);
    const facetCall = requestsOf(fetch).find((r) => r.url.includes('/statistics/facets'))!;
    expect(new URL(facetCall.url).searchParams.get('scorer_version_id')).toBe('61');
  });

  it('draws the facet heatmap with numbers and intervals in each cell, per facet', async () => {
    serve();
    renderProject('/projects/3/reports/runs');
    const region = await screen.findByRole('region', { name: /Facet heatmap/ });
    const grid = await within(region).findByRole('table');
    expect(within(grid).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Target', 'math', 'geo']);
    const [smart, fast] = within(grid).getAllByRole('row').slice(1);
    expect(within(smart!).getAllByRole('cell').map((c) => c.textContent)).toEqual(['0.90[0.80, 1.00]n=2', '0.70[0.60, 0.80]n=2']);
    expect(within(fast!).getAllByRole('cell').map((c) => c.textContent)).toEqual(['0.30[0.10, 0.50]n=2', 'no scores']);
    await userEvent.selectOptions(within(region).getByLabelText('Facet'), 'by_difficulty');
    const hard = within(within(region).getByRole('table')).getAllByRole('row')[1]!;
    expect(hard).toHaveTextContent('0.60no intervaln=1');
    await userEvent.click(within(region).getByRole('button', { name: 'Show as table' }));
    expect(cells(within(region).getByRole('table'))).toEqual([['Fake Smart', 'hard', '0.60', 'no interval', '100.0%', '1']]);
  });

  it('shows the win matrix, Bradley–Terry ratings and position bias with their intervals', async () => {
    serve();
    renderProject('/projects/3/reports/runs');
    const matrix = await screen.findByRole('region', { name: 'Pairwise win matrix' });
    const rows = within(within(matrix).getByRole('table')).getAllByRole('row').slice(1);
    // Smart beat Fast 6, lost 2, 2 draws (1 tie + 1 split): (6 + 1) / 10 = 70%
    expect(within(rows[0]!).getAllByRole('cell').map((c) => c.textContent)).toEqual(['—', '70%6–2–2 of 10']);
    expect(within(rows[1]!).getAllByRole('cell').map((c) => c.textContent)).toEqual(['30%2–6–2 of 10', '—']);
    expect(await tableOf('Bradley–Terry ratings')).toEqual([
      ['Fake Smart', '1120', '[1040, 1210]', '6 / 2 / 2', '—'],
      ['Fake Fast', '880', '[790, 960]', '2 / 2 / 6', '—'],
    ]);
    expect(await tableOf('Position bias')).toEqual([['fake-a', 'Fake Smart vs Fake Fast', '10.0%', '[1.8%, 40.4%]', '1 of 10', '6 / 2 / 1', '0']]);
  });

  it('shows inter-judge and judge–human agreement as tables', async () => {
    serve();
    renderProject('/projects/3/reports/runs');
    expect(await tableOf('Inter-judge agreement')).toEqual([['Fake Smart', '0.72', '—', 'fake-a (mean 0.80), fake-b (mean 0.70)', '3']]);
    expect(await tableOf('Judge–human agreement')).toEqual([['fake-a', 'Fake Smart', '66.7%', '0.25', '0.50', '0.40', '3']]);
  });

  it('reads the run and scorer chosen in the address', async () => {
    const fetch = serve({
      '/api/projects/3/runs/70/statistics': { ...statistics(), run_id: 70 },
      '/api/projects/3/runs/70/statistics/facets': facets(),
      '/api/projects/3/runs/70/comparisons/summary': noComparisons(),
    });
    renderProject('/projects/3/reports/runs?run=70');
    expect(await screen.findByText('No pairwise comparisons in this run')).toBeInTheDocument();
    expect(screen.getByLabelText('Run')).toHaveValue('70');
    expect(requestsOf(fetch).some((r) => r.url.includes('/runs/77/'))).toBe(false);
  });

  it('says what to do without runs, or when the run has no scorer', async () => {
    serve({ '/api/projects/3/runs': { items: [], total: 0, page: 1, page_size: 100 } });
    const first = renderProject('/projects/3/reports/runs');
    expect(await screen.findByText('No runs yet')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Start a run' })).toBeInTheDocument();
    first.unmount();
    serve({ [`${RUN}/statistics`]: { run_id: 77, scorers: [], items: [] }, [`${RUN}/comparisons/summary`]: noComparisons() });
    renderProject('/projects/3/reports/runs');
    expect(await screen.findByText('This run has no scorer')).toBeInTheDocument();
    expect(screen.getByText('No pairwise comparisons in this run')).toBeInTheDocument();
  });
});
