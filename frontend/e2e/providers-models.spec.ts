import { expect, test } from '@playwright/test';
import { registerAndSignIn } from './helpers';

// The fake LLM provider that `assay up` runs for this config (ASSAY_FAKE_PORT in playwright.config.ts).
const FAKE_URL = process.env.ASSAY_E2E_FAKE_URL!;

test('providers and models: add and test providers, price a model, server-side parameter errors, archive and restore', async ({ page }) => {
  const email = await registerAndSignIn(page, 'e2e-prov');
  await expect(page.getByTestId('current-user')).toHaveText(email);

  // A project, then its Providers tab
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E providers');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  const tabs = page.getByRole('navigation', { name: 'Project sections' });
  await tabs.getByRole('link', { name: 'Providers' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/providers$/);
  await expect(page.getByText('No providers yet')).toBeVisible();

  // 1. Assay's fake provider: the test on save passes
  await page.getByRole('button', { name: 'Add provider' }).click();
  let dialog = page.getByRole('dialog', { name: 'Add provider' });
  await dialog.getByLabel('Provider', { exact: true }).selectOption('fake');
  await expect(dialog.getByLabel('Provider', { exact: true }).locator('option:checked')).toHaveText(/Fake provider/);
  await dialog.getByLabel('Label', { exact: true }).fill('Fake');
  await dialog.getByLabel('Base URL').fill(FAKE_URL);
  await dialog.getByRole('button', { name: 'Add and test' }).click();
  const added = page.getByRole('dialog', { name: 'Provider added' });
  await expect(added.getByTestId('save-result')).toContainText('“Fake” saved. Connection test passed.');
  await added.getByRole('button', { name: 'Done' }).click();
  await expect(added).toBeHidden();

  const providers = page.getByRole('table', { name: 'Providers' });
  const fakeRow = providers.getByRole('row').filter({ hasText: 'Fake' });
  await expect(fakeRow.getByText('OK', { exact: true })).toBeVisible();
  await expect(fakeRow.getByText('Default', { exact: true })).toBeVisible();
  await expect(fakeRow.getByText(FAKE_URL)).toBeVisible();

  // On-demand test, shown inline
  await page.getByRole('button', { name: 'Test Fake' }).click();
  await expect(fakeRow.getByText(/^Connection OK/)).toBeVisible();

  // 2. An OpenAI-compatible server (the same fake) with a key it refuses: saved, test failed
  await page.getByRole('button', { name: 'Add provider' }).click();
  dialog = page.getByRole('dialog', { name: 'Add provider' });
  await dialog.getByLabel('Provider', { exact: true }).selectOption('openai_compatible');
  await dialog.getByLabel('Label', { exact: true }).fill('Compatible (bad key)');
  await dialog.getByLabel('Base URL').fill(FAKE_URL);
  await dialog.getByLabel('API key (optional)').fill('bad-key');
  await dialog.getByRole('button', { name: 'Add and test' }).click();
  const failed = page.getByRole('dialog', { name: 'Provider added' }).getByTestId('save-result');
  await expect(failed).toContainText('saved, but the connection test failed');
  await expect(failed).toContainText(/Incorrect API key|401/);
  await expect(failed).not.toContainText('bad-key');
  await page.getByRole('button', { name: 'Done' }).click();

  const badRow = providers.getByRole('row').filter({ hasText: 'Compatible (bad key)' });
  await expect(badRow.getByText('Failed', { exact: true })).toBeVisible();
  await expect(badRow.getByText('••••', { exact: true })).toBeVisible(); // a 7-character key shows none of itself

  // 3. A priced model on the fake provider
  await tabs.getByRole('link', { name: 'Models' }).click();
  await expect(page.getByText('No models yet')).toBeVisible();
  await page.getByRole('button', { name: 'Add model' }).click();
  dialog = page.getByRole('dialog', { name: 'Add model' });
  await dialog.getByLabel('Name', { exact: true }).fill('Fake mini');
  const fakeOption = dialog.getByLabel('Provider', { exact: true }).locator('option', { hasText: /^Fake — / });
  await dialog.getByLabel('Provider', { exact: true }).selectOption((await fakeOption.getAttribute('value'))!);
  // Discover lists the fake provider's models; picking one fills the model id.
  await dialog.getByRole('button', { name: 'Discover' }).click();
  const picker = dialog.getByLabel(/^Discovered models \(\d+\)$/);
  await expect(picker.locator('option', { hasText: 'fake-fast' })).toHaveCount(1);
  await picker.selectOption('fake-fast');
  await expect(dialog.getByLabel('Model id')).toHaveValue('fake-fast');
  await dialog.getByLabel('Input price ($ per 1M tokens)').fill('0.15');
  await dialog.getByLabel('Output price ($ per 1M tokens)').fill('0.6');
  await dialog.getByLabel('Context window (optional)').fill('128000');
  await dialog.getByLabel('Temperature').fill('0');
  await dialog.getByRole('button', { name: 'Add model' }).click();
  await expect(dialog).toBeHidden();

  const models = page.getByRole('table', { name: 'Models' });
  const row = models.getByRole('row').filter({ hasText: 'Fake mini' });
  await expect(row.getByText('$0.15')).toBeVisible();
  await expect(row.getByText('$0.60')).toBeVisible();
  await expect(row.getByText('128,000')).toBeVisible();
  await expect(row.getByText('fake-fast')).toBeVisible();
  await expect(row.getByText('Active')).toBeVisible();
  await expect(row.getByText('Unpriced')).toHaveCount(0);

  // 4. A temperature the server refuses: its field error shows next to the field
  await page.getByRole('button', { name: 'Edit Fake mini' }).click();
  dialog = page.getByRole('dialog', { name: 'Edit model' });
  await expect(dialog.getByLabel('Input price ($ per 1M tokens)')).toHaveValue('0.15');
  await dialog.getByLabel('Temperature').fill('3');
  await dialog.getByRole('button', { name: 'Save model' }).click();
  await expect(dialog.locator('#model-param-temperature-error')).toBeVisible();
  await expect(dialog.getByLabel('Temperature')).toHaveAttribute('aria-invalid', 'true');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  // 5. Archive, then restore
  await page.getByRole('button', { name: 'Archive Fake mini' }).click();
  await expect(models).toBeHidden();
  await page.getByRole('checkbox', { name: 'Show archived' }).check();
  await expect(row.getByText('Archived')).toBeVisible();
  await page.getByRole('button', { name: 'Restore Fake mini' }).click();
  await expect(row.getByText('Active')).toBeVisible();
  await page.getByRole('checkbox', { name: 'Show archived' }).uncheck();
  await expect(row.getByText('$0.15')).toBeVisible();

  // The provider now counts the model, and refuses to be deleted while the model uses it
  await tabs.getByRole('link', { name: 'Providers' }).click();
  const fakeModels = providers.getByRole('row').filter({ hasText: 'Demos and tests only' });
  await expect(fakeModels.getByRole('cell').nth(5)).toHaveText('1');
  await page.getByRole('button', { name: 'Delete Fake' }).click();
  const confirm = page.getByRole('dialog', { name: 'Delete provider' });
  await expect(confirm).toContainText('1 model uses it');
  await confirm.getByRole('button', { name: 'Delete provider' }).click();
  await expect(confirm.getByRole('alert')).toContainText('Fake mini');
  await confirm.getByRole('button', { name: 'Close', exact: true }).click();
  await expect(confirm).toBeHidden();
  await expect(fakeModels).toBeVisible();
});
