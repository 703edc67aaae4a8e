import { expect, test, type Page } from '@playwright/test';
import { registerAndSignIn } from './helpers';

/** A manual scorer of the project, through the API with the browser's session (and CSRF token). */
async function createManualScorer(page: Page, projectId: string) {
  const csrf = (await page.context().cookies()).find((c) => c.name === 'assay_csrf')?.value ?? '';
  const reply = await page.request.post(`/api/projects/${projectId}/scorers`, {
    headers: { 'X-CSRF-Token': csrf },
    data: { name: 'Helpfulness', kind: 'manual', params: { scale: '1-5' } },
  });
  expect(reply.status()).toBe(201);
}

const cell = (page: Page, row: number, col: number) => page.locator(`[data-cell="${row}:${col}"]`);

test('view a run in the results grid, move by keyboard, score by hand in review mode with . , numbers and undo, and find the scores after a reload', async ({ page }) => {
  test.setTimeout(180_000);
  await registerAndSignIn(page, 'e2e-results');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E results');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  const projectId = page.url().split('/').pop()!;
  await createManualScorer(page, projectId);

  // The demo run: 12 cases on the fake provider's two models.
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });

  // The grid: cases by targets
  await page.getByRole('link', { name: 'Results grid' }).click();
  await expect(page).toHaveURL(/\/runs\/\d+\/results$/);
  const grid = page.getByRole('grid', { name: 'Results: cases by target' });
  await expect(grid).toHaveAttribute('aria-rowcount', '13');
  await expect(grid).toHaveAttribute('aria-colcount', '3');
  await expect(grid.getByRole('columnheader')).toHaveCount(3);
  await expect(cell(page, 0, 1)).toContainText('ms');
  await expect(grid.getByRole('rowheader').first()).toContainText('#1');
  await expect(grid.getByRole('rowheader').first().getByRole('link', { name: 'Side by side' })).toHaveAttribute('href', /\/runs\/\d+\/cases\/\d+$/);

  // Keyboard: one cell in the tab order, arrows move focus, Enter opens the output
  await cell(page, 0, 1).focus();
  await page.keyboard.press('ArrowRight');
  await expect(cell(page, 0, 2)).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await expect(cell(page, 2, 2)).toBeFocused();
  await page.keyboard.press('Home');
  await expect(cell(page, 2, 0)).toBeFocused();
  await page.keyboard.press('Control+End');
  await expect(cell(page, 11, 2)).toBeFocused();
  await expect(grid.locator('[tabindex="0"]')).toHaveCount(1);
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog');
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  // A filter the server applies: no cell failed
  await page.getByLabel('Status').selectOption('failed');
  await expect(page.getByText('No matching cases')).toBeVisible();
  await page.getByRole('button', { name: 'Clear' }).click();
  await expect(grid).toHaveAttribute('aria-rowcount', '13');

  // Review mode: the run pinned no manual scorer; the project's is offered
  await page.getByRole('link', { name: 'Review one by one' }).click();
  await expect(page).toHaveURL(/\/runs\/\d+\/review$/);
  const position = page.getByTestId('review-position');
  await expect(position).toContainText('Case 1 of 12 · output 1 of 2');
  await expect(page.getByLabel('Score with')).toContainText('Helpfulness (rating 1–5) — not pinned by this run');
  await expect(page.getByTestId('review-output')).not.toBeEmpty();

  await page.keyboard.press('4'); // case 1, first model: 4
  await expect(position).toContainText('Case 1 of 12 · output 2 of 2');
  await page.keyboard.press('.'); // case 1, second model: 5, passed
  await expect(position).toContainText('Case 2 of 12 · output 1 of 2');
  await page.keyboard.press(','); // case 2, first model: 1, failed
  await expect(position).toContainText('Case 2 of 12 · output 2 of 2');
  await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toContainText('rating 1, fail');

  await page.keyboard.press('Control+z'); // takes back the "," and returns to it
  await expect(position).toContainText('Case 2 of 12 · output 1 of 2');
  await expect(page.getByTestId('my-score')).toContainText('none yet');
  await page.getByRole('button', { name: 'Undo' }).click(); // takes back the "."
  await expect(position).toContainText('Case 1 of 12 · output 2 of 2');
  await expect(page.getByTestId('my-score')).toContainText('none yet');
  await page.keyboard.press('3');
  await expect(position).toContainText('Case 2 of 12 · output 1 of 2');

  // The "?" help lists the shortcuts
  await page.keyboard.press('?');
  const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await expect(help).toContainText('Approve');
  await page.keyboard.press('Escape');

  // Saved on the server: after a reload, case 1 holds 4 and 3, case 2 nothing
  await page.reload();
  await expect(position).toContainText('Case 1 of 12 · output 1 of 2');
  await expect(page.getByTestId('my-score')).toContainText('rating 4');
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('my-score')).toContainText('rating 3');
  await page.keyboard.press('ArrowRight');
  await expect(position).toContainText('Case 2 of 12 · output 1 of 2');
  await expect(page.getByTestId('my-score')).toContainText('none yet');

  // and the grid shows them in their cells
  await page.getByRole('link', { name: 'Results', exact: true }).click();
  await expect(cell(page, 0, 1)).toContainText('Helpfulness 4/5');
  await expect(cell(page, 0, 1)).toContainText('You: rating 4');
  await expect(cell(page, 0, 2)).toContainText('Helpfulness 3/5');
  await expect(cell(page, 1, 1)).not.toContainText('Helpfulness');
});
