import { expect, test, type Page } from '@playwright/test';
import { registerAndSignIn, setScripts } from './helpers';

// Reports beyond the basics (issue 14, C12/C15/C17): the cost report counts the judges, the
// leaderboard opens on a scorer that has scores, and the run report, model ratings and judge
// calibration show what the API computes. Judge verdicts come from the fake provider's
// scripted replies (playwright.config.ts: ASSAY_E2E_FAKE_URL).
const RUBRIC = {
  criteria: [
    { name: 'Accuracy', description: 'The answer is factually right.', weight: 0.5, scale: '1-5' },
    { name: 'Clarity', description: 'The answer is easy to follow.', weight: 0.5, scale: '1-5' },
  ],
};
const VERDICT = JSON.stringify({
  criteria: { Accuracy: { score: 4, rationale: 'Mostly right.' }, Clarity: { score: 5, rationale: 'Clear.' } },
  summary: 'Good.',
  confidence: 0.8,
});

async function api<T = any>(page: Page, method: 'GET' | 'POST', path: string, data?: unknown): Promise<T> {
  const csrf = (await page.context().cookies()).find((c) => c.name === 'assay_csrf')?.value ?? '';
  const res = await page.request.fetch(path, { method, data, headers: { 'X-CSRF-Token': csrf } });
  expect(res.ok(), `${method} ${path}: ${res.status()} ${await res.text()}`).toBeTruthy();
  return (await res.json()) as T;
}

/** As the app writes money (lib/money formatMicros): every micro-dollar, at least two decimals. */
const dollars = (micros: number) => {
  const frac = String(micros % 1_000_000).padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `$${Math.floor(micros / 1_000_000).toLocaleString('en-US')}.${frac}`;
};

test.afterEach(async ({ request }) => {
  await setScripts(request, []);
});

test('a judged run: every spend in the cost report, the leaderboard on the scored judge, the run headline, verdicts, flakiness, ratings and calibration', async ({ page, request }) => {
  test.setTimeout(180_000);
  await setScripts(request, [{ model: null, pattern: 'The answer is factually right', reply: VERDICT }]);
  await registerAndSignIn(page, 'e2e-reports-more');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  await dialog.getByLabel('Project name').fill('E2E reports more');
  await dialog.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  const projectId = Number(new URL(page.url()).pathname.split('/')[2]);
  const base = `/api/projects/${projectId}`;

  // The demo run brings the demo dataset and the two fake models.
  await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Runs' }).click();
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });

  // A check nobody runs, made first; then a rubric judge on both models, two repeats each.
  const models = (await api(page, 'GET', `${base}/models`)).items as { id: number; name: string }[];
  const dataset = (await api(page, 'GET', `${base}/datasets`)).items[0] as { id: number };
  await api(page, 'POST', `${base}/scorers`, { name: 'Unused check', kind: 'icontains', params: { value: 'never' } });
  const judge = await api(page, 'POST', `${base}/scorers`, { name: 'Helpful', kind: 'llm_judge', params: { rubric: RUBRIC, judges: [models[0]!.name] } });
  const run = await api(page, 'POST', `${base}/runs`, {
    name: 'Judged run',
    dataset_id: dataset.id,
    repeats: 2,
    targets: models.map((m) => ({ model_id: m.id })),
    scorer_ids: [judge.id],
  });
  await expect.poll(async () => (await api(page, 'GET', `${base}/runs/${run.id}`)).status, { timeout: 90_000 }).toBe('completed');
  const runs = (await api(page, 'GET', `${base}/runs?page_size=100`)).items as { spent_micros: number; judge_spent_micros: number }[];
  const spent = runs.reduce((s, r) => s + r.spent_micros, 0);
  const judged = runs.reduce((s, r) => s + r.judge_spent_micros, 0);
  expect(judged).toBeGreaterThan(0);

  // The cost report's total is what the runs list adds up to; the judges are a kind of spend.
  await page.goto(`/projects/${projectId}/reports/costs`);
  const costs = await api(page, 'GET', `${base}/reports/costs`);
  expect(costs.total.spent_micros).toBe(spent);
  const totals = page.getByLabel('Totals');
  await expect(totals.getByText('Spent', { exact: true }).locator('xpath=following-sibling::dd[1]')).toHaveText(dollars(spent));
  const kinds = page.getByLabel('Spent by kind');
  await expect(kinds.getByText('Judges', { exact: true }).locator('xpath=following-sibling::dd[1]')).toHaveText(dollars(judged));
  const byRun = page.getByRole('region', { name: 'Spend by run' });
  await byRun.getByRole('button', { name: 'Show as table' }).click();
  await expect(byRun.getByRole('rowheader').first()).toHaveText('Judged run'); // newest first

  // The leaderboard opens on the judge (it has scores), not on the first scorer made.
  await page.goto(`/projects/${projectId}/reports`);
  await expect(page.getByRole('combobox', { name: 'Scorer', exact: true })).toHaveValue(String(judge.id));
  await expect(page.getByRole('region', { name: 'Mean score by model' })).toBeVisible();

  // The run report: headline, targets compared in words, flakiness over the repeats.
  await page.goto(`/projects/${projectId}/reports/runs?run=${run.id}`);
  const dash = await api(page, 'GET', `${base}/reports/runs/${run.id}/dashboard?scorer_id=${judge.id}`);
  const headline = page.getByLabel('Run headline');
  await expect(headline.getByText(/^Headline score/).locator('xpath=following-sibling::dd[1]')).toHaveText(dash.score.mean.toFixed(3));
  await expect(headline.getByText('Spent', { exact: true }).locator('xpath=following-sibling::dd[1]')).toHaveText(dollars((await api(page, 'GET', `${base}/runs/${run.id}`)).spent_micros));
  const versionId = (await api(page, 'GET', `${base}/runs/${run.id}/statistics`)).scorers[0].scorer_version_id;
  const pair = await api(page, 'GET', `${base}/runs/${run.id}/compare-targets?scorer_version_id=${versionId}`);
  const [a, b] = [pair.target_a.label, pair.target_b.label];
  const words = { 'B better': `${b} is better than ${a}`, 'A better': `${a} is better than ${b}`, 'not distinguishable': `${a} and ${b} are not distinguishable` }[pair.comparison.verdict as string]!;
  await expect(page.getByRole('region', { name: 'Targets compared' }).getByText(words)).toBeVisible();
  await expect(page.getByRole('region', { name: 'Flaky cases' }).getByText(/repeated cases flaky/).first()).toBeVisible();

  // Project tabs: no pairwise judging yet, and the judge's calibration (one judge, no people).
  await page.getByRole('navigation', { name: 'Reports' }).getByRole('link', { name: 'Model ratings' }).click();
  await expect(page.getByText('No ratings yet')).toBeVisible();
  await page.getByRole('navigation', { name: 'Reports' }).getByRole('link', { name: 'Judge calibration' }).click();
  const calibration = (await api(page, 'GET', `${base}/reports/judge-calibration`)).items[0];
  const card = page.getByRole('region', { name: 'Helpful v1 (llm_judge)' });
  await expect(card.getByText(`${calibration.outputs} outputs scored across 1 run`)).toBeVisible();
  await expect(card.getByText('One judge: no agreement between judges to measure.')).toBeVisible();
  await page.getByRole('navigation', { name: 'Reports' }).getByRole('link', { name: 'RAG metrics' }).click();
  await expect(page.getByText('No RAG metrics scorer')).toBeVisible();

  // The report pages fit a phone's width (the app header is another item's: main is measured).
  await page.setViewportSize({ width: 390, height: 800 });
  const pages: [string, string][] = [
    ['reports/costs', 'Spend by model'],
    [`reports/runs?run=${run.id}`, 'Mean score per target'],
    ['reports/ratings', 'No ratings yet'],
    ['reports/judges', 'Helpful v1 (llm_judge)'],
    ['reports/rag', 'No RAG metrics scorer'],
  ];
  for (const [path, shown] of pages) {
    await page.goto(`/projects/${projectId}/${path}`);
    await expect(page.getByRole('region', { name: shown }).or(page.getByText(shown, { exact: true })).first()).toBeVisible();
    expect(await page.evaluate(() => document.getElementById('main')!.scrollWidth - document.getElementById('main')!.clientWidth), path).toBeLessThanOrEqual(0);
  }
});
