import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { apiError, project } from '@/test/providerFixtures';
import { RUN_STATUSES } from './RunStatusBadge';
import { run } from '../testFixtures';

const runs = RUN_STATUSES.map((status, i) =>
  run({ id: i + 1, name: `Run ${status}`, status, total: 8, succeeded: i % 5, failed: i % 2, skipped: status === 'cancelled' ? 3 : 0, spent_micros: 125_000 * i }),
);

function serve(items = runs, role = 'editor') {
  return mockFetch((req) => {
    const url = new URL(req.url);
    if (url.pathname === '/api/projects/3') return json(project(role));
    if (url.pathname === '/api/projects/3/runs') {
      const status = url.searchParams.get('status');
      const filtered = items.filter((r) => !status || r.status === status);
      return json({ items: filtered, total: url.searchParams.get('page') === '1' && filtered.length === items.length ? 45 : filtered.length, page: Number(url.searchParams.get('page')), page_size: 20 });
    }
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}

describe('RunsSection', { timeout: 15_000 }, () => {
  it('lists runs with every status badge, progress, cost against the budget, and pages', async () => {
    const fetch = serve();
    renderProject('/projects/3');
    const table = await screen.findByRole('table', { name: 'Runs' });
    for (const label of ['Pending', 'Running', 'Paused', 'Completed', 'Partial', 'Failed', 'Cancelled', 'Budget exceeded']) {
      expect(within(table).getByText(label)).toBeInTheDocument();
    }
    const cancelled = within(table).getByRole('link', { name: 'Run cancelled' }).closest('tr')!;
    // 1 sent of 8, 3 never sent: a cancelled run is not counted as done by its skipped cells.
    expect(cancelled).toHaveTextContent('1 / 8 (12%) · 3 skipped');
    expect(cancelled).toHaveTextContent('$0.75 / $1.00');
    expect(within(cancelled).getByRole('progressbar', { name: 'Progress of Run cancelled' })).toHaveAttribute('aria-valuenow', '12');
    await userEvent.click(screen.getByRole('button', { name: 'Next' }));
    expect(requestsOf(fetch).some((r) => new URL(r.url).searchParams.get('page') === '2')).toBe(true);
  });

  it('filters by status, with an empty state that clears the filter', async () => {
    const fetch = serve(runs.filter((r) => r.status !== 'paused'));
    renderProject('/projects/3');
    await screen.findByRole('table', { name: 'Runs' });
    await userEvent.selectOptions(screen.getByLabelText('Filter by status'), 'paused');
    expect(await screen.findByText('No paused runs')).toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => new URL(r.url).searchParams.get('status') === 'paused')).toBe(true);
    await userEvent.click(screen.getByRole('button', { name: 'Show all runs' }));
    expect(await screen.findByRole('table', { name: 'Runs' })).toBeInTheDocument();
  });

  it('offers New run from the empty state', async () => {
    serve([]);
    renderProject('/projects/3');
    expect(await screen.findByText('No runs yet')).toBeInTheDocument();
    const links = screen.getAllByRole('link', { name: 'New run' });
    expect(links.at(-1)).toHaveAttribute('href', '/projects/3/runs/new');
  });
});
