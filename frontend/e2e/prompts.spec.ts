import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { registerAndSignIn } from './helpers';

// The page's own content fits 390 px (the shell header above it is item 16's to fix).
async function expectNoViolations(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

async function noSidewaysScroll(page: Page) {
  const overflow = await page.locator('main').evaluate((m) => m.scrollWidth - m.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
}

test('write a prompt, edit it into a new version with a changelog after a diff preview, compare, mark production', async ({ page }) => {
  await registerAndSignIn(page, 'e2e-prompts');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E prompts');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);

  await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Prompts' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/prompts$/);
  await expect(page.getByText('No prompts yet')).toBeVisible();
  await page.getByRole('button', { name: 'New prompt' }).click();
  const create = page.getByRole('dialog', { name: 'New prompt' });
  await create.getByLabel('Name').fill('Support answer');
  await create.getByLabel('Template').fill('Answer {{ question }} for {{audience}}.');
  await expect(create.getByRole('list', { name: 'Variables' }).getByRole('listitem')).toHaveText(['question', 'audience']);
  await create.getByRole('button', { name: 'Create prompt' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/prompts\/\d+$/);
  await expect(page.getByRole('heading', { name: 'Support answer' })).toBeVisible();
  const versions = page.getByRole('table', { name: 'Versions' });
  await expect(versions.getByRole('row')).toHaveCount(2);
  await expect(versions.getByRole('row').nth(1)).toContainText('Production');

  // Edit v1: a new template, system text, one example and a tool; variables follow live.
  await versions.getByRole('button', { name: 'Edit v1' }).click();
  const editor = page.getByRole('form', { name: 'Edit v1' });
  await editor.getByLabel('Template').fill('Answer {{ question }} for {{audience}} in one short paragraph.');
  await editor.getByLabel('System text (optional)').fill('You are {{tone}} and precise.');
  await expect(editor.getByRole('list', { name: 'Variables' }).getByRole('listitem')).toHaveText(['question', 'audience', 'tone']);
  await editor.getByRole('button', { name: 'Add example' }).click();
  await editor.getByLabel('Input (user)').fill('What is 2+2?');
  await editor.getByLabel('Output (assistant)').fill('4.');
  await editor.getByLabel('Tools (JSON, optional)').fill('[{"name": "lookup order"}]');
  await editor.getByRole('button', { name: 'Review changes' }).click();
  await expect(editor.getByText(/name must be 1-64 letters/)).toBeVisible();
  await editor.getByLabel('Tools (JSON, optional)').fill('[{"name": "lookup_order", "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}]');
  await editor.getByRole('button', { name: 'Review changes' }).click();

  // The diff preview against v1, then the changelog rule, then save.
  const review = page.getByRole('form', { name: 'Save a new version from v1' });
  const preview = review.getByTestId('version-diff');
  await expect(preview.getByRole('region', { name: 'Template changes' }).locator('ins')).toContainText('in one short paragraph');
  await expect(preview.getByRole('region', { name: 'System text changes' })).toContainText('You are {{tone}} and precise.');
  await expect(preview.getByRole('region', { name: 'Few-shot examples changes' })).toContainText('What is 2+2?');
  await expect(preview.getByRole('region', { name: 'Tools changes' })).toContainText('lookup_order');
  await expectNoViolations(page);
  await review.getByLabel('Changelog').fill('Too short');
  await review.getByRole('button', { name: 'Save as new version' }).click();
  await expect(review.getByText(/at least 10 characters \(9 so far\)/)).toBeVisible();
  await review.getByLabel('Changelog').fill('One paragraph, a tone and a worked example');
  await review.getByRole('button', { name: 'Save as new version' }).click();
  await expect(review).toBeHidden();
  await expect(versions.getByRole('row')).toHaveCount(3);
  const v2 = versions.getByRole('row').nth(1);
  await expect(v2).toContainText('v2');
  await expect(v2).toContainText('from v1');
  await expect(v2).toContainText('One paragraph, a tone and a worked example');
  await expect(page.getByRole('list', { name: 'Lineage' }).getByRole('listitem')).toHaveCount(2);
  await expect(page.getByRole('heading', { name: 'v2', exact: true })).toBeVisible();

  // Compare any two versions: v2 against v1, then side by side.
  const compare = page.getByRole('region', { name: 'Compare versions' });
  await compare.getByLabel('From version').selectOption({ label: 'v1' });
  await compare.getByLabel('To version').selectOption({ label: 'v2' });
  await expect(compare.getByRole('region', { name: 'Template changes' }).locator('ins')).toContainText('in one short paragraph');
  await compare.getByText('Side by side').click();
  await expect(compare.getByTestId('diff-split').first()).toBeVisible();

  await expectNoViolations(page);
  // Production moves to v2, exactly one marker.
  await versions.getByRole('button', { name: 'Mark v2 as production' }).click();
  await expect(page.getByText('Production: v2')).toBeVisible();
  await expect(versions.getByText('Production', { exact: true })).toHaveCount(1);
  await expect(versions.getByRole('button', { name: 'Mark v1 as production' })).toBeVisible();

  await page.getByRole('link', { name: '← All prompts' }).click();
  const row = page.getByRole('table', { name: 'Prompts' }).getByRole('row').nth(1);
  await expect(row).toContainText('Support answer');
  await expect(row).toContainText('v2');
  await expect(row.getByText('v2', { exact: true }).last()).toBeVisible();

  // 390 px wide: no sideways scroll on the list, the prompt page and the editor.
  await page.setViewportSize({ width: 390, height: 844 });
  await noSidewaysScroll(page);
  await row.getByRole('link', { name: 'Support answer' }).click();
  await expect(versions).toBeVisible();
  await noSidewaysScroll(page);
  await versions.getByRole('button', { name: 'Edit v2' }).click();
  await expect(page.getByRole('form', { name: 'Edit v2' })).toBeVisible();
  await noSidewaysScroll(page);
});
