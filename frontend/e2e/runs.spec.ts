import { expect, test } from '@playwright/test';
import { registerAndSignIn } from './helpers';

test('configure a run across the two demo models with a temperature grid, confirm, watch it live, pause, resume: one result per cell', async ({ page }) => {
  test.setTimeout(180_000);
  await registerAndSignIn(page, 'e2e-runs');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E runs');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  const projectUrl = page.url();

  // The demo run brings the demo dataset (12 questions) and the two fake models.
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await page.goto(projectUrl);

  // The runs list: filter by status, then configure a new run from the tab.
  const runsTable = page.getByRole('table', { name: 'Runs' });
  await expect(runsTable.getByText('Completed')).toBeVisible();
  await page.getByLabel('Filter by status').selectOption('paused');
  await expect(page.getByText('No paused runs')).toBeVisible();
  await page.getByRole('button', { name: 'Show all runs' }).click();
  await page.getByRole('link', { name: 'New run' }).first().click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/new$/);
  await expect(page.getByRole('heading', { name: 'New run' })).toBeVisible();

  await page.getByLabel('Run name (optional)').fill('Grid run');
  await page.getByLabel('Dataset').selectOption({ label: 'Demo questions (Questions, 12 cases)' });
  const models = page.getByRole('group', { name: 'Models' });
  await models.getByLabel(/^Fake Fast/).check();
  await models.getByLabel(/^Fake Smart/).check();
  const line = page.getByTestId('calls-line');
  await expect(line).toHaveText('2 targets × 12 cases × 1 repeat = 24 calls');

  // A temperature grid on Fake Fast: three values, so four targets in all.
  await page.getByRole('button', { name: 'Add temperature variation for Fake Fast' }).click();
  await page.getByLabel('Temperature values for Fake Fast').fill('0, 0.5, 1');
  await expect(line).toHaveText('4 targets × 12 cases × 1 repeat = 48 calls');
  await page.getByLabel('Repeats').fill('2');
  await expect(line).toHaveText('4 targets × 12 cases × 2 repeats = 96 calls');
  // Slow enough to pause: one call at a time, no cached replies.
  await page.getByLabel('Concurrency (optional)').fill('1');
  await page.getByLabel(/Use the response cache/).uncheck();
  await page.getByLabel('Budget in dollars (optional)').fill('5');

  await page.getByRole('button', { name: 'Review' }).click();
  const confirm = page.getByRole('dialog', { name: 'Start this run?' });
  await expect(confirm).toBeVisible();
  await expect(confirm.getByTestId('estimate-total')).toContainText(/\$\d+\.\d{2}/);
  const perTarget = confirm.getByRole('table', { name: 'Cost per target' });
  await expect(perTarget.getByRole('row')).toHaveCount(5); // header + 4 targets
  await expect(confirm.getByTestId('run-problems')).toHaveCount(0);
  await confirm.getByRole('button', { name: 'Start run' }).click();

  // Live
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Grid run' })).toBeVisible();
  await expect(page.getByTestId('run-total')).toHaveText('96');
  await expect(page.getByRole('list', { name: 'Progress per target' }).getByRole('listitem')).toHaveCount(4);
  await expect(page.getByTestId('stream-state')).toHaveText('Live');
  await expect(page.getByTestId('run-status')).toHaveText('Running', { timeout: 30_000 });

  // Pause once some cells are done, check it holds, then resume.
  await expect.poll(async () => Number(await page.getByTestId('run-succeeded').textContent()), { timeout: 30_000 }).toBeGreaterThan(0);
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Paused');
  await expect(page.getByTestId('phase-2')).toContainText('Paused');
  // Cells in flight finish; after that nothing moves while paused.
  await page.waitForTimeout(2_000);
  const held = await page.getByTestId('run-succeeded').textContent();
  await page.waitForTimeout(2_000);
  await expect(page.getByTestId('run-succeeded')).toHaveText(held ?? '');
  expect(Number(held)).toBeLessThan(96);

  await page.getByRole('button', { name: 'Resume' }).click();
  await expect(page.getByTestId('run-status')).toHaveText(/Running|Completed/);

  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 120_000 });
  await expect(page.getByRole('progressbar', { name: 'Run progress' })).toHaveAttribute('aria-valuenow', '100');
  await expect(page.getByTestId('run-succeeded')).toHaveText('96');
  await expect(page.getByTestId('run-failed')).toHaveText('0');
  await expect(page.getByTestId('phase-3')).toContainText('Completed');

  // Exactly one result per cell: the outputs count equals the calls.
  await expect(page.getByTestId('outputs-total')).toContainText('96 outputs');
  await page.getByLabel('Status').selectOption('succeeded');
  await expect(page.getByTestId('outputs-total')).toContainText('96 outputs');
  const summary = page.getByRole('table', { name: 'Summary per target' });
  await expect(summary.getByRole('row')).toHaveCount(5);
  await expect(page.getByTestId('summary-success-rate')).toHaveText('100.0%');
  await expect(page.getByText('No failures')).toBeVisible();

  // One output in full: its case and the raw exchange with the provider.
  await page.getByRole('table', { name: 'Outputs' }).getByRole('button', { name: /^Details of case/ }).first().click();
  const detail = page.getByRole('dialog', { name: /^Case #\d+ · / });
  await expect(detail.getByRole('heading', { name: 'Raw request' })).toBeVisible();
  await expect(detail).toContainText('"messages"');
  await page.keyboard.press('Escape');
  await expect(detail).toBeHidden();
});

test('cancel asks first, shows progress and cost, keeps what is done and skips the rest', async ({ page }) => {
  test.setTimeout(150_000);
  await registerAndSignIn(page, 'e2e-runs');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E cancel');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'E2E cancel' }).click();

  await page.getByRole('link', { name: 'New run' }).first().click();
  await page.getByLabel('Dataset').selectOption({ label: 'Demo questions (Questions, 12 cases)' });
  await page.getByRole('group', { name: 'Models' }).getByLabel(/^Fake Smart/).check();
  await page.getByLabel('Repeats').fill('5');
  await page.getByLabel('Concurrency (optional)').fill('1');
  await page.getByLabel(/Use the response cache/).uncheck();
  await expect(page.getByTestId('calls-line')).toHaveText('1 target × 12 cases × 5 repeats = 60 calls');
  await page.getByRole('button', { name: 'Review' }).click();
  await page.getByRole('dialog', { name: 'Start this run?' }).getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect.poll(async () => Number(await page.getByTestId('run-succeeded').textContent()), { timeout: 30_000 }).toBeGreaterThan(0);

  await page.getByRole('button', { name: 'Cancel run' }).click();
  const confirm = page.getByRole('dialog', { name: 'Cancel this run?' });
  await expect(confirm.getByTestId('cancel-summary')).toContainText(/\d+ of 60 cells/);
  await expect(confirm.getByTestId('cancel-summary')).toContainText(/\$\d+\.\d{2}/);
  await expect(confirm).toContainText('This cannot be undone');
  await confirm.getByRole('button', { name: 'Cancel run' }).click();
  await expect(confirm).toBeHidden();
  await expect(page.getByTestId('run-status')).toHaveText('Cancelled', { timeout: 30_000 });
  await expect(page.getByTestId('phase-3')).toContainText('Cancelled');
  await expect(page.getByRole('button', { name: /Pause|Resume|Cancel run/ })).toHaveCount(0);

  // Every cell is accounted for: what finished is kept, the rest skipped.
  await expect
    .poll(async () => {
      const n = async (id: string) => Number(await page.getByTestId(id).textContent());
      return (await n('run-succeeded')) + (await n('run-failed')) + (await n('run-skipped'));
    }, { timeout: 30_000 })
    .toBe(60);
  expect(Number(await page.getByTestId('run-skipped').textContent())).toBeGreaterThan(0);
  await page.getByLabel('Status').selectOption('skipped');
  await expect(page.getByTestId('outputs-total')).toContainText(`${await page.getByTestId('run-skipped').textContent()} outputs`);
});

test('a small budget: the alert shows, the run stops as budget exceeded, and the rest is skipped', async ({ page }) => {
  test.setTimeout(150_000);
  await registerAndSignIn(page, 'e2e-runs');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E budget');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'E2E budget' }).click();

  await page.getByRole('link', { name: 'New run' }).first().click();
  await page.getByLabel('Dataset').selectOption({ label: 'Demo questions (Questions, 12 cases)' });
  await page.getByRole('group', { name: 'Models' }).getByLabel(/^Fake Smart/).check();
  await page.getByLabel('Repeats').fill('5');
  await page.getByLabel('Concurrency (optional)').fill('1');
  await page.getByLabel(/Use the response cache/).uncheck();
  // Each call reserves its maximum cost (256 output tokens at $15/M): a cent covers a few.
  await page.getByLabel('Budget in dollars (optional)').fill('0.01');
  await page.getByRole('button', { name: 'Review' }).click();
  const confirm = page.getByRole('dialog', { name: 'Start this run?' });
  await expect(confirm).toContainText('Budget: $0.01.');
  await confirm.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);

  await expect(page.getByTestId('run-status')).toHaveText('Budget exceeded', { timeout: 60_000 });
  await expect(page.getByTestId('budget-alert')).toContainText('Budget exceeded');
  await expect(page.getByTestId('run-cost')).toContainText('/ $0.01 budget');
  await expect
    .poll(async () => {
      const n = async (id: string) => Number(await page.getByTestId(id).textContent());
      return (await n('run-succeeded')) + (await n('run-failed')) + (await n('run-skipped'));
    }, { timeout: 30_000 })
    .toBe(60);
  expect(Number(await page.getByTestId('run-skipped').textContent())).toBeGreaterThan(0);
});
