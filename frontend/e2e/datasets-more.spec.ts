import { expect, test, type Page } from '@playwright/test';
import { signUpWithProject } from './helpers';

const newProject = (page: Page, name: string) => signUpWithProject(page, 'e2e-data-more', name);

async function createDataset(page: Page, name: string) {
  await page.getByRole('button', { name: 'New dataset' }).click();
  const create = page.getByRole('dialog', { name: 'New dataset' });
  await create.getByLabel('Name').fill(name);
  await create.getByRole('button', { name: 'Create dataset' }).click();
  await expect(page.getByRole('heading', { name })).toBeVisible();
}

async function addTag(page: Page, tag: string) {
  await page.getByLabel('New dataset tag').fill(tag);
  await page.getByRole('button', { name: 'Add tag' }).click();
  await expect(page.getByRole('list', { name: 'Dataset tags' }).getByRole('button', { name: `Remove tag ${tag}` })).toBeVisible();
}

test('datasets: several cases added by form make one version, bad input shown at its field; tags on datasets, the tag manager and the list filters', async ({ page }) => {
  test.setTimeout(120_000);
  await newProject(page, 'E2E datasets more');
  await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Datasets' }).click();
  await createDataset(page, 'Capitals');
  const datasetUrl = page.url();

  // Two cases in one dialog; the second left empty is refused at its field, nothing saved
  await page.getByRole('button', { name: 'Add case' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add case' });
  await dialog.getByLabel('Question').fill('Capital of France?');
  await dialog.getByLabel('Expected answer (optional)').fill('Paris');
  await dialog.getByLabel('Difficulty').selectOption('hard');
  await dialog.getByRole('button', { name: 'Add another case' }).click();
  const second = dialog.getByRole('region', { name: 'Case 2 of 2' });
  await dialog.getByRole('button', { name: 'Add 2 cases' }).click();
  await expect(second.getByText('Enter the question')).toBeVisible();
  await expect(dialog.getByRole('region', { name: 'Case 1 of 2' }).getByLabel('Question')).toHaveValue('Capital of France?');
  await expect(page.getByTestId('dataset-summary')).toContainText('0 cases in version 1');
  await second.getByLabel('Question').fill('Capital of Peru?');
  await second.getByLabel('Tags').fill('south-america');
  await dialog.getByLabel('Version note (optional)').fill('two by hand');
  await dialog.getByRole('button', { name: 'Add 2 cases' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('dataset-summary')).toContainText('2 cases in version 2');
  const cases = page.getByRole('table', { name: 'Cases' });
  await expect(cases.getByText('Capital of Peru?')).toBeVisible();
  await expect(cases.getByText('Paris')).toBeVisible();
  await page.getByRole('button', { name: 'Versions' }).click();
  const versions = page.getByRole('list', { name: 'Versions' }).getByRole('listitem');
  await expect(versions).toHaveCount(2);
  await expect(versions.first()).toContainText('two by hand');

  // The dataset's own tags, and where it came from
  await addTag(page, 'geo');
  await addTag(page, 'benchmark');
  await page.getByRole('button', { name: 'Origin' }).click();
  await expect(page.getByTestId('dataset-origin')).toContainText('Written by hand or imported');

  // A second dataset, tagged geo, with no hard case
  await page.getByRole('navigation', { name: 'Dataset breadcrumb' }).getByRole('link', { name: 'Datasets' }).click();
  await createDataset(page, 'Rivers');
  await addTag(page, 'geo');
  await page.getByRole('navigation', { name: 'Dataset breadcrumb' }).getByRole('link', { name: 'Datasets' }).click();

  // List filters: difficulty of the cases, and a tag clicked on a row
  const list = page.getByRole('table', { name: 'Datasets' });
  await expect(list.getByRole('link')).toHaveCount(2);
  await page.getByLabel('Difficulty').selectOption('hard');
  await expect(list.getByRole('link')).toHaveCount(1);
  await expect(list.getByRole('link', { name: 'Capitals' })).toBeVisible();
  await page.getByLabel('Difficulty').selectOption('');
  await list.getByRole('row').filter({ hasText: 'Rivers' }).getByRole('button', { name: 'geo' }).click();
  await expect(page.getByLabel('Tag', { exact: true })).toHaveValue('geo');
  await expect(list.getByRole('link')).toHaveCount(2);
  await page.getByLabel('Tag', { exact: true }).fill('benchmark');
  await expect(list.getByRole('link')).toHaveCount(1);
  await page.getByLabel('Tag', { exact: true }).fill('');

  // The tag manager: rename on every dataset, remove
  await page.getByRole('button', { name: 'Manage tags' }).click();
  const manager = page.getByRole('dialog', { name: 'Dataset tags' });
  await expect(manager.getByRole('listitem').filter({ hasText: 'geo' })).toContainText('2 datasets');
  await manager.getByRole('button', { name: 'Rename geo' }).click();
  await manager.getByLabel('New name for geo').fill('geography');
  await manager.getByRole('button', { name: 'Save' }).click();
  await expect(manager).toContainText('Renamed “geo” to “geography” on 2 datasets.');
  await manager.getByRole('button', { name: 'Remove benchmark' }).click();
  await manager.getByRole('button', { name: 'Remove from 1' }).click();
  await expect(manager).toContainText('Removed “benchmark” from 1 dataset.');
  await page.keyboard.press('Escape');
  await expect(list.getByRole('button', { name: 'geography' })).toHaveCount(2);
  await expect(list.getByRole('button', { name: 'benchmark' })).toHaveCount(0);

  await page.goto(datasetUrl);
  const tags = page.getByRole('list', { name: 'Dataset tags' });
  await expect(tags.getByRole('listitem')).toHaveCount(1);
  await expect(tags.getByRole('button', { name: 'Remove tag geography' })).toBeVisible();
});
