import { expect, test, type Locator, type Page } from '@playwright/test';

// Project settings (edison FR-PM-003/004): a project budget small enough that the demo run
// stops as budget exceeded, with the reason on the run page; an invite for an email nobody
// registered yet, accepted when that email registers.
const PASSWORD = 'Assay-Demo-2024!';
const unique = (prefix: string) => `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;

async function register(page: Page, email: string) {
  await page.goto('/register');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Confirm password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page).toHaveURL(/\/projects$/); // registering signs in
}

async function newProject(page: Page, name: string): Promise<string> {
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  await dialog.getByLabel('Project name').fill(name);
  await dialog.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  return page.url();
}

async function fitsWithin(region: Locator, width: number) {
  await expect(region).toBeVisible();
  const box = await region.boundingBox();
  expect(box && box.x + box.width).toBeLessThanOrEqual(width);
  expect(await region.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
}

const tab = (page: Page, name: string) => page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name });

test('a project budget stops the demo run as budget exceeded, with the reason shown', async ({ page }) => {
  await register(page, unique('e2e-settings'));
  const projectUrl = await newProject(page, 'E2E budget');

  await tab(page, 'Settings').click();
  await expect(page).toHaveURL(/\/projects\/\d+\/settings$/);
  await expect(page.getByText('Spent so far: $0.00 (no cap)')).toBeVisible();
  // Bad values are refused beside their fields, nothing saved.
  await page.getByLabel('Max retries').fill('11');
  await page.getByLabel('Project budget in dollars').fill('-1');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect(page.getByText('A budget cannot be negative.')).toBeVisible();
  await expect(page.getByText(/A whole number from 0 to 10/)).toBeVisible();
  await page.getByLabel('Max retries').fill('1');
  await page.getByLabel('Project budget in dollars').fill('0.001');
  await page.getByLabel('Alert at (% of the budget)').fill('50');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect(page.getByText('Settings saved.')).toBeVisible();
  await expect(page.getByText('Spent so far: $0.00 of $0.001')).toBeVisible();
  // Narrow screens: the form wraps within the width (the app header is checked elsewhere).
  await page.setViewportSize({ width: 390, height: 844 });
  await fitsWithin(page.getByRole('form', { name: 'Project settings' }), 390);
  await page.setViewportSize({ width: 1280, height: 800 });

  // The demo run reserves each call's maximum against the cap and stops when none fits.
  await page.goto(projectUrl);
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Budget exceeded', { timeout: 60_000 });
  await expect(page.getByTestId('budget-alert')).toContainText('Budget exceeded');
  await expect(page.getByText(/Stopped: .*may cost up to \$[\d.,]+ and the budget has \$[\d.,]+ left/)).toBeVisible();

  // Settings show the spend the run made once its last call in flight settled (the Fake
  // Smart call that could cost more than the cap was never sent); the log reads as sentences.
  await expect(async () => {
    await page.goto(`${projectUrl}/settings`);
    await expect(page.getByText(/^Spent so far: \$0\.0*[1-9]\d* of \$0\.001$/)).toBeVisible({ timeout: 2_000 });
    await expect(page.getByText(/held by calls in flight/)).toHaveCount(0);
  }).toPass({ timeout: 30_000 });
  await tab(page, 'Members').click();
  const activity = page.getByRole('table', { name: 'Activity' });
  await expect(activity.getByText(/set the project budget to \$0\.001, the budget alert threshold to 50% and the default max retries to 1$/)).toBeVisible();
});

test('an invite for an unregistered email becomes a membership when that email registers', async ({ page, browser }) => {
  await register(page, unique('e2e-owner'));
  await newProject(page, 'E2E invites');
  await tab(page, 'Members').click();

  const invitee = unique('e2e-invitee');
  await page.getByLabel('Member email').fill(invitee);
  await page.getByLabel('Member role').selectOption('editor');
  await page.getByRole('button', { name: 'Add member' }).click();
  await expect(page.getByText(`Nobody has registered with ${invitee} yet. Invite them as editor?`)).toBeVisible();
  await page.getByRole('button', { name: `Invite ${invitee}` }).click();
  await expect(page.getByText(`${invitee} is invited as editor`)).toBeVisible();
  const pending = page.getByRole('table', { name: 'Pending invites' });
  await expect(pending.getByRole('row')).toHaveCount(2); // header + the invite
  await expect(pending.getByText(invitee)).toBeVisible();
  await expect(page.getByRole('table', { name: 'Activity' }).getByText(`invited ${invitee} as editor`)).toBeVisible();
  await page.setViewportSize({ width: 390, height: 844 });
  await fitsWithin(page.locator('[aria-labelledby="invites-heading"]'), 390);
  await page.setViewportSize({ width: 1280, height: 800 });

  // A second invite, revoked: it leaves the list.
  const revoked = unique('e2e-revoked');
  await page.getByLabel('Member email').fill(revoked);
  await page.getByRole('button', { name: 'Add member' }).click();
  await page.getByRole('button', { name: `Invite ${revoked}` }).click();
  await expect(pending.getByText(revoked)).toBeVisible();
  await page.getByRole('button', { name: `Revoke the invite of ${revoked}` }).click();
  await expect(pending.getByText(revoked)).toHaveCount(0);

  // The invitee registers in a fresh browser and finds the project, as an editor.
  const context = await browser.newContext();
  const theirs = await context.newPage();
  await register(theirs, invitee);
  await theirs.getByRole('link', { name: /E2E invites/ }).first().click();
  await expect(theirs.getByRole('heading', { level: 1, name: 'E2E invites' })).toBeVisible();
  await expect(theirs.getByText('Your role:')).toBeVisible();
  await expect(theirs.locator('header').getByText('Editor')).toBeVisible();
  await context.close();

  await page.reload();
  await expect(page.getByRole('table', { name: 'Pending invites' })).toHaveCount(0);
  await expect(page.getByRole('table', { name: 'Members' }).getByText(invitee)).toBeVisible();
});
