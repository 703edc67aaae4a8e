import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { renderProject } from '@/test/project';
import { costs, emptyCosts, serveReports, tokens } from '../testFixtures';

const R = '/api/projects/3/reports';

async function tableOf(name: string) {
  const region = await screen.findByRole('region', { name });
  await userEvent.click(within(region).getByRole('button', { name: 'Show as table' }));
  return within(within(region).getByRole('table'))
    .getAllByRole('row')
    .slice(1)
    .map((r) => Array.from(r.children).map((c) => c.textContent));
}

describe('CostsPage', () => {
  it('shows totals, and spend and tokens by model, day and run as tables', async () => {
    serveReports({ [`${R}/costs`]: costs(), [`${R}/tokens`]: tokens() });
    renderProject('/projects/3/reports/costs');
    const total = within(await screen.findByLabelText('Totals'));
    expect(total.getByText('Spent').nextSibling).toHaveTextContent('$1.60');
    expect(total.getByText('Model cost per output').nextSibling).toHaveTextContent('$0.125');
    const kinds = within(screen.getByLabelText('Spent by kind'));
    expect(kinds.getByText('Model calls').nextSibling).toHaveTextContent('$1.25');
    expect(kinds.getByText('Judges').nextSibling).toHaveTextContent('$0.20');
    expect(kinds.getByText('Judge mode').nextSibling).toHaveTextContent('$0.10');
    expect(kinds.getByText('Generation').nextSibling).toHaveTextContent('$0.05');
    expect(await tableOf('Spend by model')).toEqual([
      ['Fake Smart', '$1.20', '$1.00', '$0.20', '$0.00', '5', '$0.20', '600', '300'],
      ['Fake Fast', '$0.25', '$0.25', '$0.00', '$0.00', '5', '$0.05', '400', '200'],
      ['No model (traces, judge mode)', '$0.10', '$0.00', '$0.10', '$0.00', '0', '—', '0', '0'],
      ['Writer', '$0.05', '$0.00', '$0.00', '$0.05', '0', '—', '100', '100'],
    ]);
    expect(await tableOf('Tokens per model')).toEqual([
      ['Fake Smart', '600', '300', '180'],
      ['Fake Fast', '400', '200', '120'],
      ['No model (traces, judge mode)', '0', '0', '—'],
      ['Writer', '100', '100', '—'],
    ]);
    expect(await tableOf('Spend per day')).toEqual([
      ['2026-11-19', '$0.30', '$0.25', '$0.00', '$0.05', '2', '300', '200'],
      ['2026-11-20', '$1.30', '$1.00', '$0.30', '$0.00', '8', '800', '400'],
    ]);
    expect(await tableOf('Token usage over time')).toEqual([
      ['2026-11-19', 'Fake Fast', '200', '100', '2'],
      ['2026-11-20', 'Fake Smart', '600', '300', '5'],
    ]);
    const runs = await tableOf('Spend by run');
    expect(runs.map((r) => r[0])).toEqual(['Judge questions', 'Nightly']); // as served: newest first
    expect(runs[0]![1]).toBe('completed (judge mode)');
    expect(runs[1]!.slice(3)).toEqual(['$1.45', '$0.20', '10', '1,000 / 500']);
    expect(screen.getByRole('link', { name: 'Nightly' })).toHaveAttribute('href', '/projects/3/runs/77');
  });

  it('says to start a run when nothing was spent yet', async () => {
    serveReports({ [`${R}/costs`]: emptyCosts(), [`${R}/tokens`]: { items: [] } });
    renderProject('/projects/3/reports/costs');
    expect(await screen.findByText('Nothing spent yet')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Start a run' })).toBeInTheDocument();
    expect(screen.queryByRole('region', { name: 'Spend by model' })).not.toBeInTheDocument();
  });
});
