import { expect, test } from '@playwright/test';

// Registering signs the new user in (issue 31 item 8): the account form lands on the
// user's projects, signed in, with no sign-in form in between; the session is a real one
// (it survives a reload and may write: the CSRF token came with the registration).
test('registering signs in and lands on the projects', async ({ page }) => {
  const email = `e2e-register-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
  const password = 'Assay-Demo-2024!';
  const seen: string[] = [];
  page.on('request', (req) => {
    const path = new URL(req.url()).pathname;
    if (path.startsWith('/api/auth/')) seen.push(`${req.method()} ${path}`);
  });

  await page.goto('/register');
  await page.getByLabel('Name (optional)').fill('New Person');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Confirm password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();

  await expect(page).toHaveURL(/\/projects$/);
  await expect(page.getByTestId('current-user')).toHaveText(email);
  await expect(page.getByText('No projects yet')).toBeVisible();
  expect(seen).not.toContain('POST /api/auth/login');

  // Signed in for real: a reload keeps the session, and a write passes the CSRF check.
  await page.reload();
  await expect(page).toHaveURL(/\/projects$/);
  await expect(page.getByTestId('current-user')).toHaveText(email);
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  await dialog.getByLabel('Project name').fill('First project');
  await dialog.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
});
