import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { scorers, serveReports, trend } from '../testFixtures';

const R = '/api/projects/3/reports';

describe('TrendPage', () => {
  it('shows the mean per run and model with intervals as a table', async () => {
    const fetch = serveReports({ [`${R}/trend`]: trend(), '/api/projects/3/scorers': scorers() });
    renderProject('/projects/3/reports/trend');
    const region = await screen.findByRole('region', { name: 'Mean score per run: Exact' });
    await userEvent.click(within(region).getByRole('button', { name: 'Show as table' }));
    const table = within(region).getByRole('table');
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Run', 'Started', 'All models (95% interval)', 'Fake Fast', 'Fake Smart']);
    const rows = within(table).getAllByRole('row').slice(1);
    const cells = rows.map((r) => Array.from(r.children).map((c) => c.textContent));
    expect(cells[0]!.filter((_, i) => i !== 1)).toEqual(['#70 First', '0.60 [0.40, 0.80]', '0.60 [0.40, 0.80]', '—']);
    expect(cells[1]!.filter((_, i) => i !== 1)).toEqual(['#77 Second', '0.70 [0.55, 0.85]', '0.65 [0.50, 0.80]', '0.75 [0.60, 0.90]']);
    const asked = requestsOf(fetch).find((r) => r.url.includes('/trend'))!;
    expect(new URL(asked.url).searchParams.get('scorer_id')).toBe('5');
  });

  it('says what to do without scored runs, or without a scorer', async () => {
    serveReports({ [`${R}/trend`]: { ...trend(), models: [], runs: [] }, '/api/projects/3/scorers': scorers() });
    const first = renderProject('/projects/3/reports/trend');
    expect(await screen.findByText('No scored runs yet')).toBeInTheDocument();
    first.unmount();
    serveReports({ '/api/projects/3/scorers': { items: [], total: 0, page: 1, page_size: 100 } });
    renderProject('/projects/3/reports/trend');
    expect(await screen.findByText('No scorer to follow')).toBeInTheDocument();
  });
});
