import { expect, test } from '@playwright/test';

test('register (which signs in), create a project and watch a demo run complete live', async ({ page }) => {
  const email = `e2e-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
  const password = 'Assay-Demo-2024!';

  // Content types of the run's event-stream responses, to prove the page listened live.
  const eventStreams: string[] = [];
  page.on('response', (res) => {
    if (/\/api\/projects\/\d+\/runs\/\d+\/events$/.test(new URL(res.url()).pathname)) {
      eventStreams.push(res.headers()['content-type'] ?? '');
    }
  });

  // Register
  await page.goto('/register');
  await expect(page.getByRole('heading', { name: 'Create your account' })).toBeVisible();
  await page.getByLabel('Name (optional)').fill('E2E Tester');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  const rules = page.getByRole('list', { name: 'Password requirements' });
  await expect(rules.getByText('(met)')).toHaveCount(5);
  await expect(page.getByTestId('password-strength')).toHaveText('Strength: Strong');
  await page.getByLabel('Confirm password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();

  // Registering signs in. Projects: empty at first
  await expect(page).toHaveURL(/\/projects$/);
  await expect(page.getByTestId('current-user')).toHaveText(email);
  await expect(page.getByText('No projects yet')).toBeVisible();

  // Create a project
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  await expect(dialog).toBeVisible();
  await dialog.getByLabel('Project name').fill('E2E demo project');
  await dialog.getByLabel('Description (optional)').fill('Made by the Playwright test.');
  await dialog.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  await expect(page.getByRole('heading', { level: 1, name: 'E2E demo project' })).toBeVisible();
  await expect(page.getByText('No runs yet')).toBeVisible();

  // Start the demo run and follow it live
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  const progress = page.getByRole('progressbar', { name: 'Run progress' });
  await expect(progress).toBeVisible();
  await expect(progress).toHaveAttribute('aria-valuenow', '100', { timeout: 90_000 });
  await expect(page.getByTestId('run-percent')).toHaveText('100%');
  await expect(page.getByTestId('run-status')).toHaveText('Completed');

  const total = Number(await page.getByTestId('run-total').textContent());
  expect(total).toBeGreaterThan(0);
  await expect(page.getByTestId('run-succeeded')).toHaveText(String(total));
  await expect(page.getByTestId('run-failed')).toHaveText('0');

  // The counters came from the event stream, and the outputs table filled in.
  expect(eventStreams.length).toBeGreaterThan(0);
  expect(eventStreams[0]).toContain('text/event-stream');
  const outputs = page.getByRole('table', { name: 'Outputs' });
  await expect(outputs.getByRole('row').nth(1)).toBeVisible();
  await expect(outputs.getByText('succeeded').first()).toBeVisible();

  // The project page lists the finished run.
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'E2E demo project' }).click();
  const runs = page.getByRole('table', { name: 'Runs' });
  await expect(runs.getByText('Completed')).toBeVisible();
  await expect(runs.getByRole('progressbar', { name: 'Progress of Demo run' })).toHaveAttribute('aria-valuenow', '100');
});
