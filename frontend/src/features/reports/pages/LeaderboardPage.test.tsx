import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { leaderboard, quality, row, scorers, serveReports } from '../testFixtures';

const R = '/api/projects/3/reports';

const names = (table: HTMLElement) =>
  within(table)
    .getAllByRole('row')
    .slice(1)
    .map((r) => within(r).getByRole('rowheader').textContent);

const datasets = { items: [{ id: 11, name: 'Demo questions' }, { id: 12, name: 'Other' }], total: 2, page: 1, page_size: 100 };

function serve(board = leaderboard(), q = quality()) {
  return serveReports({ [`${R}/leaderboard`]: board, [`${R}/question-quality`]: q, '/api/projects/3/scorers': scorers(), '/api/projects/3/datasets': datasets });
}

describe('LeaderboardPage', () => {
  it('ranks by the first pointwise scorer and sorts by any column, empty values last', async () => {
    const fetch = serve();
    renderProject('/projects/3/reports');
    const table = await screen.findByRole('table', { name: 'Leaderboard' });
    // the API's order (best first) until a column is chosen
    expect(names(table)).toEqual(['Fake Smart', 'Fake Fast', 'Fake Cheap']);
    const board = requestsOf(fetch).find((r) => r.url.includes('/leaderboard'))!;
    expect(new URL(board.url).searchParams.get('scorer_id')).toBe('5'); // not the pairwise judge (9)
    expect(new URL(board.url).searchParams.get('versions')).toBe('all');

    const cost = within(table).getByRole('button', { name: /Cost per output/ });
    await userEvent.click(cost);
    expect(names(table)).toEqual(['Fake Cheap', 'Fake Fast', 'Fake Smart']);
    expect(cost.closest('th')).toHaveAttribute('aria-sort', 'ascending');
    await userEvent.click(cost);
    expect(names(table)).toEqual(['Fake Smart', 'Fake Fast', 'Fake Cheap']);
    expect(cost.closest('th')).toHaveAttribute('aria-sort', 'descending');

    // latency: Cheap has none, so it stays last both ways
    const p50 = within(table).getByRole('button', { name: /Latency p50/ });
    await userEvent.click(p50);
    expect(names(table)).toEqual(['Fake Fast', 'Fake Smart', 'Fake Cheap']);
    await userEvent.click(p50);
    expect(names(table)).toEqual(['Fake Smart', 'Fake Fast', 'Fake Cheap']);

    await userEvent.click(within(table).getByRole('button', { name: /^Model/ }));
    expect(names(table)).toEqual(['Fake Cheap', 'Fake Fast', 'Fake Smart']);

    const smart = within(table).getByRole('rowheader', { name: 'Fake Smart' }).closest('tr')!;
    expect(smart).toHaveTextContent('0.75 [0.50, 1.00]');
    expect(smart).toHaveTextContent('75.0% [30.1%, 95.4%]');
    expect(smart).toHaveTextContent('$0.00003');
    expect(smart).toHaveTextContent('400 ms');
  });

  it('shows each chart as a table with the same numbers and intervals', async () => {
    serve();
    renderProject('/projects/3/reports');
    const score = await screen.findByRole('region', { name: 'Mean score by model' });
    expect(within(score).queryByRole('table')).not.toBeInTheDocument();
    const toggle = within(score).getByRole('button', { name: 'Show as table' });
    expect(toggle).toHaveAttribute('aria-pressed', 'false');
    await userEvent.click(toggle);
    expect(within(score).getByRole('button', { name: 'Show as chart' })).toHaveAttribute('aria-pressed', 'true');
    const rows = within(within(score).getByRole('table')).getAllByRole('row').slice(1);
    expect(rows.map((r) => Array.from(r.children).map((c) => c.textContent))).toEqual([
      ['Fake Smart', '0.75', '[0.50, 1.00]', '2', '4'],
      ['Fake Fast', '0.50', '[0.25, 0.75]', '2', '4'],
      ['Fake Cheap', '0.25', 'no interval', '1', '1'],
    ]);

    const pass = screen.getByRole('region', { name: 'Pass rate by model' });
    await userEvent.click(within(pass).getByRole('button', { name: 'Show as table' }));
    const first = within(within(pass).getByRole('table')).getAllByRole('row')[1]!;
    expect(Array.from(first.children).map((c) => c.textContent)).toEqual(['Fake Smart', '75.0%', '[30.1%, 95.4%]', '3 of 4']);

    const q = screen.getByRole('region', { name: 'Question quality by generator model' });
    await userEvent.click(within(q).getByRole('button', { name: 'Show as table' }));
    const qrows = within(within(q).getByRole('table')).getAllByRole('row').slice(1);
    expect(Array.from(qrows[0]!.children).map((c) => c.textContent)).toEqual(['Fake Smart', '7.25', '[6.50, 8.00]', '10', '20', '1']);
    expect(qrows[1]).toHaveTextContent('no interval');
  });

  it('switching the scorer and versions asks the leaderboard again', async () => {
    const fetch = serve();
    renderProject('/projects/3/reports');
    await screen.findByRole('table', { name: 'Leaderboard' });
    await userEvent.selectOptions(screen.getByLabelText('Scorer'), 'Judge (llm_judge)');
    await userEvent.selectOptions(screen.getByLabelText('Versions'), 'latest');
    await screen.findByRole('table', { name: 'Leaderboard' });
    const asked = requestsOf(fetch)
      .filter((r) => r.url.includes('/leaderboard'))
      .map((r) => new URL(r.url).searchParams.toString());
    expect(asked).toContain('scorer_id=6&versions=latest');
  });

  it('narrows to a dataset and a date range, and waits while the range is reversed', async () => {
    const fetch = serve();
    renderProject('/projects/3/reports');
    await screen.findByRole('table', { name: 'Leaderboard' });
    await userEvent.selectOptions(await screen.findByLabelText('Dataset'), 'Demo questions');
    await userEvent.type(screen.getByLabelText('From (UTC)'), '2026-11-01');
    await userEvent.type(screen.getByLabelText('To (UTC)'), '2026-11-20');
    await screen.findByRole('table', { name: 'Leaderboard' });
    const asked = () =>
      requestsOf(fetch)
        .filter((r) => r.url.includes('/leaderboard'))
        .map((r) => Object.fromEntries(new URL(r.url).searchParams));
    expect(asked()).toContainEqual({ scorer_id: '5', versions: 'all', dataset_id: '11', date_from: '2026-11-01', date_to: '2026-11-20' });
    const before = asked().length;
    await userEvent.clear(screen.getByLabelText('To (UTC)'));
    await userEvent.type(screen.getByLabelText('To (UTC)'), '2026-10-01');
    expect(await screen.findByText(/The end date is before the start date/)).toBeInTheDocument();
    expect(screen.getByLabelText('To (UTC)')).toHaveAttribute('aria-invalid', 'true');
    expect(screen.queryByRole('table', { name: 'Leaderboard' })).not.toBeInTheDocument();
    expect(asked().length).toBe(before);
  });

  it('tells a filtered-out scope apart from a project without runs', async () => {
    serve({ ...leaderboard(), items: [] });
    renderProject('/projects/3/reports?dataset=12');
    expect(await screen.findByText('Nothing in this scope')).toBeInTheDocument();
    expect(screen.queryByText('No results to rank yet')).not.toBeInTheDocument();
  });

  it('says what to do when there is nothing to rank, no scores, or no judge-mode runs', async () => {
    serve({ ...leaderboard(), items: [] }, { items: [] });
    renderProject('/projects/3/reports');
    expect(await screen.findByText('No results to rank yet')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Start a run' })).toHaveAttribute('href', '/projects/3/runs/new');
    expect(screen.getByText('No question quality yet')).toBeInTheDocument();
  });

  it('explains a scorer without scores, and still lists the models', async () => {
    serve({ ...leaderboard(), items: [row({ model_id: 2, model_name: 'Fake Fast', score: { mean: null, low: null, high: null, n_cases: 0, n_values: 0 }, pass_rate: { k: 0, n: 0, rate: null, low: null, high: null }, scores: 0 })] });
    renderProject('/projects/3/reports');
    expect(await screen.findByText('No scores yet')).toBeInTheDocument();
    expect(screen.queryByRole('region', { name: 'Mean score by model' })).not.toBeInTheDocument();
    expect(within(screen.getByRole('table', { name: 'Leaderboard' })).getByRole('rowheader', { name: 'Fake Fast' })).toBeInTheDocument();
  });

  it('shows an error with a retry when the leaderboard fails', async () => {
    serveReports({
      [`${R}/leaderboard`]: () => json({ code: 'INTERNAL', status: 500, message: 'Boom', errors: {} }, 500),
      [`${R}/question-quality`]: quality(),
      '/api/projects/3/scorers': scorers(),
    });
    renderProject('/projects/3/reports');
    expect(await screen.findByText('Could not load the leaderboard')).toBeInTheDocument();
  });

  it('opens on the first scorer that has scores, not the first scorer made', async () => {
    const coverage = { items: [{ scorer_id: 6, values: 4, verdicts: 0, models: 2, discriminates: true }] };
    const fetch = serveReports({ [`${R}/leaderboard`]: leaderboard(), [`${R}/question-quality`]: quality(), [`${R}/scorers`]: coverage, '/api/projects/3/scorers': scorers(), '/api/projects/3/datasets': datasets });
    renderProject('/projects/3/reports');
    await screen.findByRole('table', { name: 'Leaderboard' });
    const board = requestsOf(fetch).find((r) => r.url.includes('/leaderboard'))!;
    expect(new URL(board.url).searchParams.get('scorer_id')).toBe('6'); // Exact (5) has no scores
    expect(screen.getByLabelText('Scorer')).toHaveValue('6');
  });

  it('opens on a scorer that discriminates, not the most-scored check every output passed', async () => {
    const coverage = {
      items: [
        { scorer_id: 5, values: 40, verdicts: 40, models: 2, discriminates: false },
        { scorer_id: 6, values: 4, verdicts: 0, models: 2, discriminates: true },
      ],
    };
    const fetch = serveReports({ [`${R}/leaderboard`]: leaderboard(), [`${R}/question-quality`]: quality(), [`${R}/scorers`]: coverage, '/api/projects/3/scorers': scorers(), '/api/projects/3/datasets': datasets });
    renderProject('/projects/3/reports');
    await screen.findByRole('table', { name: 'Leaderboard' });
    const board = requestsOf(fetch).find((r) => r.url.includes('/leaderboard'))!;
    expect(new URL(board.url).searchParams.get('scorer_id')).toBe('6');
  });

  it('says plainly when no scorer has scores, and ranks by success rate', async () => {
    const fetch = serveReports({
      [`${R}/leaderboard`]: { ...leaderboard(), scorer: null, items: leaderboard().items.map((r) => ({ ...r, score: null, pass_rate: null })) },
      [`${R}/question-quality`]: quality(),
      [`${R}/scorers`]: { items: [] },
      '/api/projects/3/scorers': scorers(),
      '/api/projects/3/datasets': datasets,
    });
    renderProject('/projects/3/reports');
    expect(await screen.findByText('No scores yet')).toBeInTheDocument();
    expect(screen.getByText(/None of the project’s scorers has scored an output yet/)).toBeInTheDocument();
    const board = requestsOf(fetch).find((r) => r.url.includes('/leaderboard'))!;
    expect(new URL(board.url).searchParams.get('scorer_id')).toBeNull();
    expect(screen.getByRole('table', { name: 'Leaderboard' })).toBeInTheDocument();
  });
});
