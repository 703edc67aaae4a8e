import { expect, test, type Page } from '@playwright/test';
import { signUpWithProject } from './helpers';

const newProject = (page: Page) => signUpWithProject(page, 'e2e-review', 'E2E review');

test('review mode: per-criterion scoring from the keys, "only unscored by me", and undo that survives a reload', async ({ page }) => {
  test.setTimeout(180_000);
  const projectId = await newProject(page);
  const csrf = (await page.context().cookies()).find((c) => c.name === 'assay_csrf')?.value ?? '';
  const made = await page.request.post(`/api/projects/${projectId}/scorers`, {
    headers: { 'X-CSRF-Token': csrf },
    data: { name: 'Quality', kind: 'manual', params: { scale: 'criteria', criteria: ['accuracy', 'tone'] } },
  });
  expect(made.status()).toBe(201);

  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await page.goto(`${page.url()}/review`);
  const position = page.getByTestId('review-position');
  await expect(position).toContainText('Case 1 of 12 · output 1 of 2');
  await expect(page.getByLabel('Score with')).toContainText('Quality (per criterion)');
  await expect(page.getByTestId('criterion-accuracy')).toHaveAttribute('aria-current', 'true');

  // accuracy 4, then tone 5: the last criterion rated saves and moves on
  await page.keyboard.press('4');
  await expect(page.getByTestId('criterion-accuracy-value')).toHaveText('4/5 *');
  await expect(page.getByTestId('criterion-tone')).toHaveAttribute('aria-current', 'true');
  await page.keyboard.press('5');
  await expect(position).toContainText('Case 1 of 12 · output 2 of 2');
  await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toContainText('accuracy 4, tone 5');

  // Only unscored by me: back on the scored output, the filter steps past it
  await page.keyboard.press('ArrowLeft');
  await expect(position).toContainText('Case 1 of 12 · output 1 of 2');
  await expect(page.getByTestId('my-score')).toContainText('accuracy 4, tone 5');
  await page.keyboard.press('u');
  await expect(page.getByRole('checkbox', { name: 'Only unscored by me' })).toBeChecked();
  await expect(position).toContainText('Case 1 of 12 · output 2 of 2');

  // tone first, then accuracy, saved with Enter
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('2');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('3');
  await page.keyboard.press('Enter');
  await expect(position).toContainText('Case 2 of 12 · output 1 of 2');

  // After a reload the undo stack is still there and undoes on the server
  await page.reload();
  await expect(position).toContainText('Case 1 of 12 · output 1 of 2');
  await expect(page.getByRole('button', { name: 'Undo' })).toBeEnabled();
  await page.keyboard.press('Control+z');
  await expect(position).toContainText('Case 1 of 12 · output 2 of 2');
  await expect(page.getByTestId('my-score')).toContainText('none yet');
  await page.getByRole('button', { name: 'Undo' }).click();
  await expect(position).toContainText('Case 1 of 12 · output 1 of 2');
  await expect(page.getByTestId('my-score')).toContainText('none yet');
  await expect(page.getByRole('button', { name: 'Undo' })).toBeDisabled();

  // and the server agrees: nothing left after another reload
  await page.reload();
  await expect(page.getByTestId('my-score')).toContainText('none yet');
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('my-score')).toContainText('none yet');
});

test('review mode: one key scores every repeat of a cell, and says so', async ({ page }) => {
  test.setTimeout(180_000);
  const projectId = await newProject(page);
  const csrf = (await page.context().cookies()).find((c) => c.name === 'assay_csrf')?.value ?? '';
  const headers = { 'X-CSRF-Token': csrf };
  const made = await page.request.post(`/api/projects/${projectId}/scorers`, { headers, data: { name: 'Helpfulness', kind: 'manual', params: { scale: '1-5' } } });
  expect(made.status()).toBe(201);
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  const demo = await (await page.request.get(`/api/projects/${projectId}/runs/${page.url().split('/').pop()}`)).json();

  // A run of the demo dataset on one model, two repeats per cell
  const started = await page.request.post(`/api/projects/${projectId}/runs`, {
    headers,
    data: { name: 'Repeats', dataset_id: demo.dataset_id, dataset_version_id: demo.dataset_version_id, targets: [{ model_id: demo.targets[0].model_id }], repeats: 2 },
  });
  expect(started.status()).toBe(202);
  const runId = (await started.json()).id;
  await page.goto(`/projects/${projectId}/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await page.goto(`/projects/${projectId}/runs/${runId}/review`);
  const position = page.getByTestId('review-position');
  await expect(position).toContainText('Case 1 of 12 · output 1 of 1');
  await expect(position).toContainText('2 repeats');
  await expect(page.getByTestId('repeats-note')).toHaveText('This cell has 2 repeats: a key scores all 2 of them at once.');
  await expect(page.getByText(/repeat 2$/)).toBeVisible();

  await page.keyboard.press('4');
  await expect(position).toContainText('Case 2 of 12');
  await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toContainText('(2 repeats): rating 4');

  // The server holds the score on both repeats of case 1
  const grid = await (await page.request.get(`/api/projects/${projectId}/runs/${runId}/grid?offset=0&limit=1`)).json();
  const outputs = grid.rows[0].cells[0].outputs as Array<{ scores: Array<{ kind: string; rating: number | null }> }>;
  expect(outputs).toHaveLength(2);
  for (const o of outputs) expect(o.scores.filter((s) => s.kind === 'manual').map((s) => s.rating)).toEqual([4]);

  // one undo takes it back from both
  await page.keyboard.press('Control+z');
  await expect(position).toContainText('Case 1 of 12');
  await expect(page.getByTestId('my-score')).toContainText('none yet');
  const after = await (await page.request.get(`/api/projects/${projectId}/runs/${runId}/grid?offset=0&limit=1`)).json();
  for (const o of after.rows[0].cells[0].outputs as Array<{ scores: Array<{ kind: string }> }>) expect(o.scores.filter((s) => s.kind === 'manual')).toHaveLength(0);
});
