import { expect, test, type Page } from '@playwright/test';
import { addFakeModel, addFakeProvider, registerAndSignIn } from './helpers';

test('datasets: create one, add and edit cases (each a new version), diff two versions, find it by search', async ({ page }) => {
  await registerAndSignIn(page, 'e2e-data');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E datasets');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);

  const tabs = page.getByRole('navigation', { name: 'Project sections' });
  await tabs.getByRole('link', { name: 'Datasets' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/datasets$/);
  await expect(page.getByText('Import or generate your first dataset')).toBeVisible();

  // Create
  await page.getByRole('button', { name: 'New dataset' }).click();
  const create = page.getByRole('dialog', { name: 'New dataset' });
  await create.getByLabel('Name').fill('Capitals');
  await create.getByLabel('Kind').selectOption('questions');
  await create.getByRole('button', { name: 'Create dataset' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/datasets\/\d+$/);
  await expect(page.getByRole('heading', { name: 'Capitals' })).toBeVisible();
  await expect(page.getByText('No cases yet')).toBeVisible();

  // Add two cases
  for (const [q, tag] of [
    ['Capital of France?', 'europe'],
    ['Capital of Peru?', 'south-america'],
  ]) {
    await page.getByRole('button', { name: 'Add case' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add case' });
    await dialog.getByLabel('Question').fill(q);
    await dialog.getByLabel('Tags').fill(tag);
    await dialog.getByLabel('Difficulty').selectOption('easy');
    await dialog.getByRole('button', { name: 'Add case' }).click();
    await expect(dialog).toBeHidden();
  }
  const cases = page.getByRole('table', { name: 'Cases' });
  await expect(cases.getByText('Capital of France?')).toBeVisible();
  await expect(cases.getByText('Capital of Peru?')).toBeVisible();
  await expect(page.getByTestId('dataset-summary')).toContainText('2 cases in version 3');

  // Edit one: a new version
  await page.getByRole('button', { name: 'Edit case 2' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit case' });
  await edit.getByLabel('Difficulty').selectOption('hard');
  await edit.getByRole('button', { name: 'Save case' }).click();
  await expect(edit).toBeHidden();
  await expect(page.getByTestId('dataset-summary')).toContainText('2 cases in version 4');

  // Filter by tag
  await page.getByLabel('Tag', { exact: true }).fill('europe');
  await expect(cases.getByText('Capital of Peru?')).toBeHidden();
  await expect(cases.getByText('Capital of France?')).toBeVisible();
  await page.getByLabel('Tag', { exact: true }).fill('');

  // Versions and the diff between the last two
  await page.getByRole('button', { name: 'Versions' }).click();
  await expect(page.getByRole('list', { name: 'Versions' }).getByRole('listitem')).toHaveCount(4);
  await expect(page.getByTestId('diff')).toContainText('0 added, 0 removed, 1 changed');
  await page.getByLabel('From').selectOption('1');
  await expect(page.getByTestId('diff')).toContainText('2 added, 0 removed, 0 changed');

  // Back in the list, found by search
  await page.getByRole('navigation', { name: 'Dataset breadcrumb' }).getByRole('link', { name: 'Datasets' }).click();
  await page.getByLabel('Search').fill('capit');
  const list = page.getByRole('table', { name: 'Datasets' });
  await expect(list.getByRole('link', { name: 'Capitals' })).toBeVisible();
  await expect(list.getByRole('row').filter({ hasText: 'Capitals' })).toContainText('v4');
  await page.getByLabel('Search').fill('nothing-like-this');
  await expect(page.getByText('No matching datasets')).toBeVisible();
});

async function newProject(page: Page, name: string) {
  await registerAndSignIn(page, 'e2e-data');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  await dialog.getByLabel('Project name').fill(name);
  await dialog.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
}

const GOOD_ROW = 'Capital of France?,Paris,europe,easy';

test('import: a CSV with a bad row shows the row error and imports nothing; fixed, it imports; coverage and export', async ({ page }) => {
  await newProject(page, 'E2E import');
  await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Datasets' }).click();
  await page.getByRole('button', { name: 'New dataset' }).click();
  const create = page.getByRole('dialog', { name: 'New dataset' });
  await create.getByLabel('Name').fill('Imported capitals');
  await create.getByRole('button', { name: 'Create dataset' }).click();
  await expect(page.getByRole('heading', { name: 'Imported capitals' })).toBeVisible();

  await page.getByRole('button', { name: 'Import' }).click();
  const wizard = page.getByRole('dialog', { name: 'Import cases' });
  const header = 'question,answer,tags,difficulty';
  await wizard.getByLabel('File').setInputFiles({
    name: 'capitals.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from(`${header}\n${GOOD_ROW}\nCapital of Peru?,Lima,south-america,impossible\n`),
  });
  const preview = wizard.getByRole('table', { name: 'Import preview' });
  await expect(preview.getByRole('row')).toHaveCount(3);
  await expect(wizard.getByText('Preview (first 2 of 2 rows)')).toBeVisible();
  await expect(wizard.getByLabel('answer', { exact: true })).toHaveValue('expected');
  await wizard.getByRole('button', { name: 'Import' }).click();
  const errors = wizard.getByTestId('import-errors');
  await expect(errors).toContainText('Nothing was imported');
  await expect(errors.getByRole('listitem')).toHaveCount(1);
  await expect(errors.getByRole('listitem')).toHaveText(/^Row \d+, difficulty: /);
  await wizard.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByText('No cases yet')).toBeVisible();
  await expect(page.getByTestId('dataset-summary')).toContainText('0 cases in version 1');

  await page.getByRole('button', { name: 'Import' }).click();
  await wizard.getByLabel('File').setInputFiles({
    name: 'capitals.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from(`${header}\n${GOOD_ROW}\nCapital of Peru?,Lima,south-america,hard\n`),
  });
  await expect(preview.getByRole('row')).toHaveCount(3);
  await wizard.getByRole('button', { name: 'Import' }).click();
  await expect(wizard.getByText(/^Imported\./)).toBeVisible();
  await wizard.getByRole('button', { name: 'Done' }).click();
  const cases = page.getByRole('table', { name: 'Cases' });
  await expect(cases.getByText('Capital of France?')).toBeVisible();
  await expect(cases.getByText('Capital of Peru?')).toBeVisible();
  await expect(cases.getByText('Lima')).toBeVisible();
  await expect(page.getByTestId('dataset-summary')).toContainText('2 cases in version 2');

  const download = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Export CSV' }).click();
  expect((await download).suggestedFilename()).toMatch(/\.csv$/);

  await page.getByRole('button', { name: 'Coverage' }).click();
  const byTag = page.getByRole('list', { name: 'By tag' });
  await expect(byTag.getByRole('listitem')).toHaveCount(2);
  await expect(page.getByRole('list', { name: 'By difficulty' })).toContainText('hard');
});

test('the cases table stays a window at 10,000 imported cases, and scrolls to the last one', async ({ page }) => {
  await newProject(page, 'E2E ten thousand');
  await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Datasets' }).click();
  await page.getByRole('button', { name: 'New dataset' }).click();
  const create = page.getByRole('dialog', { name: 'New dataset' });
  await create.getByLabel('Name').fill('Ten thousand');
  await create.getByRole('button', { name: 'Create dataset' }).click();
  await expect(page.getByRole('heading', { name: 'Ten thousand' })).toBeVisible();

  const rows = Array.from({ length: 10_000 }, (_, i) => `Question number ${i + 1}?,Answer ${i + 1},t${i % 7},easy`);
  await page.getByRole('button', { name: 'Import' }).click();
  const wizard = page.getByRole('dialog', { name: 'Import cases' });
  await wizard.getByLabel('File').setInputFiles({ name: 'many.csv', mimeType: 'text/csv', buffer: Buffer.from(`question,answer,tags,difficulty\n${rows.join('\n')}\n`) });
  await expect(wizard.getByText('Preview (first 10 of 10,000 rows)')).toBeVisible();
  await wizard.getByRole('button', { name: 'Import' }).click();
  await expect(wizard.getByText(/^Imported\./)).toBeVisible({ timeout: 60_000 });
  await wizard.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByTestId('dataset-summary')).toContainText('10,000 cases in version 2');

  const table = page.getByRole('table', { name: 'Cases' });
  await expect(table).toHaveAttribute('aria-rowcount', '10001');
  await expect(table.getByText('Question number 1?', { exact: true })).toBeVisible();
  expect(await table.getByRole('row').count()).toBeLessThan(60);
  await page.getByTestId('cases-scroll').evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await expect(table.getByText('Question number 10000?', { exact: true })).toBeVisible();
  expect(await table.getByRole('row').count()).toBeLessThan(60);
});

async function fakeModel(page: Page) {
  await addFakeProvider(page);
  await addFakeModel(page, 'Fake gen', 'fake-fast');
  await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Datasets' }).click();
}

/** Waits for the job to finish; the fake's reply is not scripted here, so this asserts on the flow. */
async function finishAndAccept(page: Page, dialogName: string, asked: number, datasetName: string) {
  const dialog = page.getByRole('dialog', { name: dialogName });
  await expect(dialog.getByTestId('generation-summary').or(dialog.getByText(/^Generation failed/))).toBeVisible({ timeout: 60_000 });
  await expect(dialog.getByTestId('generation-summary')).toContainText(new RegExp(`Asked for ${asked}, got \\d+\\. Cost \\$`));
  const items = dialog.getByRole('list', { name: 'Preview' }).getByRole('checkbox');
  if ((await items.count()) === 0) {
    await expect(dialog.getByText('The model’s reply held nothing usable.', { exact: false })).toBeVisible();
    await dialog.getByRole('button', { name: 'Discard' }).click();
    return;
  }
  await dialog.getByLabel('New dataset name').fill(datasetName);
  await dialog.getByRole('button', { name: /^Add \d+ to a new dataset$/ }).click();
  await expect(page).toHaveURL(/\/datasets\/\d+$/);
  await expect(page.getByRole('heading', { name: datasetName })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Cases' })).toBeVisible();
}

test('generation: questions and synthetic cases from a model on the fake provider (estimate, progress, preview, accept)', async ({ page }) => {
  // Content types of the jobs' event-stream responses, to prove the dialog listened live.
  const eventStreams: string[] = [];
  page.on('response', (res) => {
    if (/\/api\/projects\/\d+\/generation\/\d+\/events$/.test(new URL(res.url()).pathname)) eventStreams.push(res.headers()['content-type'] ?? '');
  });
  await newProject(page, 'E2E generation');
  await fakeModel(page);

  await page.getByRole('button', { name: 'Generate questions' }).click();
  let dialog = page.getByRole('dialog', { name: 'Generate questions' });
  await dialog.getByLabel('Generator model').selectOption({ label: 'Fake gen (fake-fast)' });
  await dialog.getByLabel('Topic').fill('World capitals');
  await dialog.getByLabel(/^How many/).fill('5');
  await dialog.getByRole('button', { name: 'Estimate cost' }).click();
  await expect(dialog.getByTestId('generation-estimate')).toContainText('Estimated cost');
  await dialog.getByRole('button', { name: 'Generate' }).click();
  await finishAndAccept(page, 'Generate questions', 5, 'Generated capitals');

  await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Datasets' }).click();
  await page.getByRole('button', { name: 'Generate cases' }).click();
  dialog = page.getByRole('dialog', { name: 'Generate synthetic cases' });
  await dialog.getByLabel('Generator model').selectOption({ label: 'Fake gen (fake-fast)' });
  await dialog.getByLabel('Variables').fill('city, question');
  await dialog.getByLabel(/^How many/).fill('10');
  await dialog.getByRole('button', { name: 'Estimate cost' }).click();
  await expect(dialog.getByTestId('generation-estimate')).toContainText('Estimated cost');
  await dialog.getByRole('button', { name: 'Generate' }).click();
  await finishAndAccept(page, 'Generate synthetic cases', 10, 'Generated cases');
  expect(eventStreams.length).toBeGreaterThanOrEqual(2);
  expect(eventStreams.every((t) => t.startsWith('text/event-stream'))).toBe(true);
});

test('generation: conversations grounded in an uploaded text document', async ({ page }) => {
  await newProject(page, 'E2E conversations');
  await fakeModel(page);
  await page.getByRole('button', { name: 'Generate conversations' }).click();
  const dialog = page.getByRole('dialog', { name: 'Generate conversations' });
  await dialog.getByLabel('Generator model').selectOption({ label: 'Fake gen (fake-fast)' });
  await dialog.getByLabel('Or upload a PDF or text file').setInputFiles({
    name: 'refunds.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from('Refund policy. Customers may return any item within 30 days of delivery for a full refund. Refunds are paid to the original card within 5 business days. Sale items can be exchanged but not refunded.\n'),
  });
  await expect(dialog.getByLabel('Document').locator('option:checked')).toHaveText(/refunds\.txt/);
  await dialog.getByLabel('Turns per conversation (1–10)').fill('2');
  await dialog.getByLabel(/^How many/).fill('2');
  await dialog.getByRole('button', { name: 'Estimate cost' }).click();
  await expect(dialog.getByTestId('generation-estimate')).toContainText('Estimated cost');
  await dialog.getByRole('button', { name: 'Generate' }).click();
  await finishAndAccept(page, 'Generate conversations', 2, 'Refund conversations');
});
