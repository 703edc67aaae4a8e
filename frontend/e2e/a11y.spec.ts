import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';

// WCAG 2.1 A and AA rules of axe-core over the main pages, with real data behind them
// (a demo run: its dataset, two fake models, outputs). Any violation fails, listed by rule.
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

async function expectNoViolations(page: Page, name: string) {
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  const found = results.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.map((n) => `${n.target.join(' ')} — ${n.failureSummary?.split('\n').join(' ')}`).join('\n    ')}`,
  );
  expect(found, `accessibility violations on ${name}`).toEqual([]);
}

/** Tabs through the page; every element the keyboard reaches must show a focus indicator. */
async function expectVisibleFocus(page: Page, name: string, stops = 40) {
  await page.locator('body').click({ position: { x: 1, y: 1 } });
  const unmarked: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < stops; i++) {
    await page.keyboard.press('Tab');
    const info = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body) return null;
      const style = getComputedStyle(el);
      const marked = (style.outlineStyle !== 'none' && style.outlineWidth !== '0px') || (style.boxShadow !== 'none' && style.boxShadow !== '');
      const label = `${el.tagName.toLowerCase()} "${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40)}"`;
      return { marked, label };
    });
    if (!info) continue;
    if (seen.has(info.label)) continue;
    seen.add(info.label);
    if (!info.marked) unmarked.push(info.label);
  }
  expect(seen.size, `keyboard stops on ${name}`).toBeGreaterThan(3);
  expect(unmarked, `elements without a visible focus indicator on ${name}`).toEqual([]);
}

test('the main pages have no WCAG A/AA violations that axe-core finds, and the keyboard reaches the first action', async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto('/login');
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await expectNoViolations(page, 'login');
  await page.goto('/register');
  await expect(page.getByRole('button', { name: 'Create account' })).toBeVisible();
  await expectNoViolations(page, 'register');

  const email = `e2e-a11y-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
  const password = 'Assay-Demo-2024!';
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Confirm password').fill(password);
  // Keyboard only: Enter in the form creates the account, which signs in.
  await page.getByLabel('Confirm password').press('Enter');
  await expect(page).toHaveURL(/\/projects$/);
  await expectNoViolations(page, 'projects (empty)');

  // The skip link is the first stop of the Tab key, and visible when focused.
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  await expect(skip).toBeFocused();
  await expect(skip).toBeVisible();
  expect(await skip.evaluate((el) => getComputedStyle(el).boxShadow)).not.toBe('none');

  await page.getByRole('button', { name: 'Create your first project' }).click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  await expectNoViolations(page, 'new project dialog');
  await dialog.getByLabel('Project name').fill('E2E a11y');
  await dialog.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  const projectUrl = page.url();

  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await expect(page.getByRole('table', { name: 'Outputs' }).or(page.getByRole('heading', { name: 'Outputs' })).first()).toBeVisible();
  await expectNoViolations(page, 'run page');
  await expectVisibleFocus(page, 'run page');

  await page.goto(projectUrl);
  await expect(page.getByRole('table', { name: 'Runs' })).toBeVisible();
  await expectNoViolations(page, 'project runs');
  await expectVisibleFocus(page, 'project runs');

  for (const [path, ready] of [
    ['/datasets', 'Demo questions'],
    ['/models', 'Fake Fast'],
    ['/providers', 'Providers'],
    ['/members', 'Members'],
    ['/runs/new', 'New run'],
  ] as const) {
    await page.goto(projectUrl + path);
    await expect(page.getByText(ready).first()).toBeVisible();
    await page.waitForLoadState('networkidle');
    await expectNoViolations(page, path);
  }
  await page.goto(projectUrl + '/datasets');
  await page.getByRole('link', { name: 'Demo questions' }).first().click();
  await expect(page).toHaveURL(/\/datasets\/\d+$/);
  await page.waitForLoadState('networkidle');
  await expectNoViolations(page, 'dataset page');

  // Pages of a run: a second demo run on the same dataset to compare with; results, review, a case.
  await page.goto(projectUrl);
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  const runUrl = page.url();
  await page.goto(`${projectUrl}/runs/compare`);
  await expect(page.getByTestId('count-fixed')).toBeVisible();
  await expectNoViolations(page, 'compare runs');
  await expectVisibleFocus(page, 'compare runs');
  const caseHref = await page.getByRole('list', { name: 'Misses list' }).getByRole('link').first().getAttribute('href');
  for (const [url, name] of [
    [`${runUrl}/results`, 'results grid'],
    [`${runUrl}/review`, 'review'],
    [caseHref!, 'case view'],
    [`${projectUrl}/reports`, 'leaderboard'],
    [`${projectUrl}/reports/costs`, 'costs'],
    [`${projectUrl}/reports/trend`, 'trend'],
    [`${projectUrl}/reports/runs`, 'run report'],
  ] as const) {
    await page.goto(url);
    await expect(page.getByRole('heading', { level: 1 }).first()).toBeVisible();
    await page.waitForLoadState('networkidle');
    await expectNoViolations(page, name);
  }

  await page.goto('/settings/tokens');
  await page.waitForLoadState('networkidle');
  await expectNoViolations(page, 'API tokens');
});
