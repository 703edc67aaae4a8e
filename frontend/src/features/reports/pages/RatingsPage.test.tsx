import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import type { ProjectRatings } from '../api';
import { scorers, serveReports } from '../testFixtures';

const R = '/api/projects/3/reports';
const datasets = { items: [], total: 0, page: 1, page_size: 100 };

const ratings = (): ProjectRatings => ({
  available: true,
  message: null,
  n_comparisons: 5,
  same_model: 1,
  without_model: 0,
  runs: 3,
  confidence: 0.95,
  items: [
    { model_id: 1, model_name: 'Fake Smart', rating: 1061.4, low: 912.2, high: 1250.9, games: 5, wins: 2, ties: 2, losses: 1, flags: [] },
    { model_id: 2, model_name: 'Fake Fast', rating: 938.6, low: 749.1, high: 1087.8, games: 5, wins: 1, ties: 2, losses: 2, flags: [] },
  ],
});

describe('RatingsPage', () => {
  it('shows each model’s rating with its interval and record, as the API gives them', async () => {
    const fetch = serveReports({ [`${R}/ratings`]: ratings(), '/api/projects/3/scorers': scorers(), '/api/projects/3/datasets': datasets });
    renderProject('/projects/3/reports/ratings');
    const region = await screen.findByRole('region', { name: 'Bradley–Terry rating by model' });
    expect(within(region).getByText(/From 5 judged comparisons across 3 runs/)).toBeInTheDocument();
    expect(within(region).getByText(/Left out: 1 comparing a model with itself\./)).toBeInTheDocument();
    await userEvent.click(within(region).getByRole('button', { name: 'Show as table' }));
    const rows = within(within(region).getByRole('table')).getAllByRole('row').slice(1);
    expect(rows.map((r) => Array.from(r.children).map((c) => c.textContent))).toEqual([
      ['Fake Smart', '1061', '[912, 1251]', '2 / 2 / 1', '5', '—'],
      ['Fake Fast', '939', '[749, 1088]', '1 / 2 / 2', '5', '—'],
    ]);
    await userEvent.selectOptions(screen.getByLabelText('Pairwise judge'), '9');
    await screen.findByRole('region', { name: 'Bradley–Terry rating by model' });
    const last = requestsOf(fetch).filter((r) => r.url.includes('/ratings')).at(-1)!;
    expect(new URL(last.url).searchParams.get('scorer_id')).toBe('9');
  });

  it('says why there are no ratings', async () => {
    serveReports({
      [`${R}/ratings`]: { ...ratings(), available: false, message: 'No pairwise judgements between two models yet.', n_comparisons: 0, same_model: 0, items: [] },
      '/api/projects/3/scorers': scorers(),
      '/api/projects/3/datasets': datasets,
    });
    renderProject('/projects/3/reports/ratings');
    expect(await screen.findByText('No ratings yet')).toBeInTheDocument();
    expect(screen.getByText('No pairwise judgements between two models yet.')).toBeInTheDocument();
  });
});
