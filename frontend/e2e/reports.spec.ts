import { expect, test, type Page } from '@playwright/test';
import { registerAndSignIn } from './helpers';

/** A JSON call as the signed-in browser (its session cookie and CSRF token). */
async function api<T = any>(page: Page, method: 'GET' | 'POST', path: string, data?: unknown): Promise<T> {
  const csrf = (await page.context().cookies()).find((c) => c.name === 'assay_csrf')?.value ?? '';
  const res = await page.request.fetch(path, { method, data, headers: { 'X-CSRF-Token': csrf } });
  expect(res.ok(), `${method} ${path}: ${res.status()} ${await res.text()}`).toBeTruthy();
  return (await res.json()) as T;
}

const rowNames = async (page: Page) =>
  page.getByRole('table', { name: 'Leaderboard' }).getByRole('rowheader').allTextContents();

test('after a scored run on two models: the leaderboard sorts and shows its charts as tables, and the cost report adds up', async ({ page }) => {
  test.setTimeout(240_000);
  await registerAndSignIn(page, 'e2e-reports');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  await dialog.getByLabel('Project name').fill('E2E reports');
  await dialog.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  const projectId = Number(new URL(page.url()).pathname.split('/')[2]);

  // Before any run the reports say what to do.
  await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Reports' }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/reports$`));
  await expect(page.getByText('No results to rank yet')).toBeVisible();
  await expect(page.getByRole('link', { name: 'Start a run' })).toBeVisible();

  // The demo run brings the demo dataset and the two fake models.
  await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Runs' }).click();
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });

  // A scored run on both models, through the API: a similarity scorer against the expected answers.
  const base = `/api/projects/${projectId}`;
  const models = (await api(page, 'GET', `${base}/models`)).items as { id: number; name: string }[];
  const dataset = (await api(page, 'GET', `${base}/datasets`)).items[0] as { id: number };
  const scorer = await api(page, 'POST', `${base}/scorers`, {
    name: 'Answer similarity',
    kind: 'similarity',
    params: { method: 'token_set_ratio', threshold: 0.5 },
  });
  const run = await api(page, 'POST', `${base}/runs`, {
    name: 'Scored run',
    dataset_id: dataset.id,
    targets: models.map((m) => ({ model_id: m.id })),
    scorer_ids: [scorer.id],
  });
  await expect.poll(async () => (await api(page, 'GET', `${base}/runs/${run.id}`)).status, { timeout: 90_000 }).toBe('completed');
  const leaderboardUrl = `${base}/reports/leaderboard?scorer_id=${scorer.id}&versions=all`;
  await expect
    .poll(async () => ((await api(page, 'GET', leaderboardUrl)).items as { scores: number }[]).filter((r) => r.scores > 0).length, { timeout: 60_000 })
    .toBe(2);
  const board = await api(page, 'GET', leaderboardUrl);

  // The leaderboard, ranked by the new scorer (the project's only one).
  await page.goto(`/projects/${projectId}/reports`);
  await expect(page.getByRole('combobox', { name: 'Scorer', exact: true })).toHaveValue(String(scorer.id));
  const table = page.getByRole('table', { name: 'Leaderboard' });
  await expect(table.getByRole('rowheader')).toHaveCount(2);
  expect(await rowNames(page)).toEqual(board.items.map((r: { model_name: string }) => r.model_name));


  // Sort by cost per output, both ways.
  const byCost = [...board.items].sort((a, b) => a.cost_per_output_micros - b.cost_per_output_micros).map((r: { model_name: string }) => r.model_name);
  const cost = table.getByRole('button', { name: /Cost per output/ });
  await cost.click();
  await expect(table.getByRole('columnheader', { name: /Cost per output/ })).toHaveAttribute('aria-sort', 'ascending');
  expect(await rowNames(page)).toEqual(byCost);
  await cost.click();
  await expect(table.getByRole('columnheader', { name: /Cost per output/ })).toHaveAttribute('aria-sort', 'descending');
  expect(await rowNames(page)).toEqual([...byCost].reverse());

  // The score chart is drawn (SVG), then shown as a table with the API's numbers and intervals.
  const scoreFigure = page.getByRole('region', { name: 'Mean score by model' });
  await expect(scoreFigure.locator('svg.recharts-surface').first()).toBeVisible();
  await scoreFigure.getByRole('button', { name: 'Show as table' }).click();
  const scoreTable = scoreFigure.getByRole('table');
  await expect(scoreTable).toBeVisible();
  await expect(scoreFigure.locator('svg.recharts-surface')).toHaveCount(0);
  for (const r of board.items as { model_name: string; score: { mean: number; low: number | null; high: number | null } }[]) {
    const row = scoreTable.getByRole('row').filter({ has: page.getByRole('rowheader', { name: r.model_name }) });
    await expect(row).toContainText(r.score.mean.toFixed(2));
    await expect(row).toContainText(r.score.low === null ? 'no interval' : `[${r.score.low.toFixed(2)}, ${r.score.high!.toFixed(2)}]`);
  }

  // The cost report: spend by model as a table matches the API, token usage as a table too.
  await page.getByRole('navigation', { name: 'Reports' }).getByRole('link', { name: 'Costs and tokens' }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/reports/costs$`));
  const costs = await api(page, 'GET', `${base}/reports/costs`);
  expect(costs.by_model).toHaveLength(2);
  const spend = page.getByRole('region', { name: 'Spend by model' });
  await expect(spend.locator('svg.recharts-surface').first()).toBeVisible();
  await spend.getByRole('button', { name: 'Show as table' }).click();
  for (const m of costs.by_model as { model_name: string; outputs: number; tokens_in: number }[]) {
    const row = spend.getByRole('row').filter({ has: page.getByRole('rowheader', { name: m.model_name }) });
    await expect(row).toContainText(String(m.outputs));
    await expect(row).toContainText(m.tokens_in.toLocaleString('en-US'));
  }
  const usage = page.getByRole('region', { name: 'Token usage over time' });
  await usage.getByRole('button', { name: 'Show as table' }).click();
  await expect(usage.getByRole('table').getByRole('row')).toHaveCount(1 + (await api(page, 'GET', `${base}/reports/tokens`)).items.length);
  await expect(page.getByRole('region', { name: 'Spend by run' })).toBeVisible();

  // The trend follows the scorer across runs; the run breakdown reads the scored run.
  await page.getByRole('navigation', { name: 'Reports' }).getByRole('link', { name: 'Score trend' }).click();
  const trend = page.getByRole('region', { name: 'Mean score per run: Answer similarity' });
  await trend.getByRole('button', { name: 'Show as table' }).click();
  await expect(trend.getByRole('table')).toContainText('Scored run');
  await page.getByRole('navigation', { name: 'Reports' }).getByRole('link', { name: 'Run breakdown' }).click();
  await expect(page.getByRole('combobox', { name: 'Run', exact: true })).toHaveValue(String(run.id));
  await expect(page.getByRole('region', { name: 'Mean score per target' })).toBeVisible();
  await expect(page.getByRole('region', { name: /Facet heatmap/ }).getByRole('table')).toContainText('geography');
});
