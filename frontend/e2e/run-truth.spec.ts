import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { signUpWithProject } from './helpers';

// The stack's fake provider: a high latency keeps the demo run (12 cases x 2 models) slow
// enough to cancel early.
const FAKE_CONFIG = `${process.env.ASSAY_E2E_FAKE_URL!}/_fake/config`;

async function setLatency(request: APIRequestContext, ms: number) {
  const reply = await request.post(FAKE_CONFIG, { data: { latency_ms: ms } });
  expect(reply.ok()).toBeTruthy();
}

async function registerWithProject(page: Page, name: string): Promise<string> {
  await signUpWithProject(page, 'e2e-truth', name);
  return page.url();
}

test.afterEach(async ({ request }) => {
  await setLatency(request, 100); // the fake's default, for the other specs
});

// Open finding: a run cancelled at 0% shows "12 of 24 cells never sent" in its summary
// (one target's 12 over the run's 24) while its phase says "24 never sent"; this test stays
// off until that summary counts the whole run again. Fix it, then remove the fixme.
test.fixme('a run cancelled early is shown as cancelled: not done, not green, its skipped cells counted', async ({ page, request }) => {
  test.setTimeout(90_000);
  const projectUrl = await registerWithProject(page, 'E2E truth');
  await setLatency(request, 3000);
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Running', { timeout: 30_000 });
  await page.getByRole('button', { name: 'Cancel run' }).click();
  await page.getByRole('dialog', { name: 'Cancel this run?' }).getByRole('button', { name: 'Cancel run' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Cancelled');

  const phase = page.getByTestId('phase-2');
  // the cancel answers first; the counters of the skipped cells follow with the next progress
  await expect(phase).toContainText(/Cancelled at \d+% · [1-9]\d* never sent/);
  await expect(phase).not.toContainText('Done');
  // A cancel also stops the calls in flight: their cells are skipped after the pending ones,
  // so the count is read once the page's two counters agree.
  const summaryCount = async () => Number(/(\d+) of 24 cells never sent/.exec(
    (await page.getByTestId('summary-skipped').textContent()) ?? '')?.[1] ?? -1);
  // the calls a cancel cut are skipped too, so the counts are read once every cell has ended
  const sentCount = async () => Number(/of (\d+) calls sent/.exec(
    (await page.getByTestId('summary-sent').textContent()) ?? '')?.[1] ?? -1);
  await expect.poll(async () => {
    const skippedNow = await summaryCount();
    return skippedNow + (await sentCount()) === 24
      && skippedNow === Number(await page.getByTestId('run-skipped').textContent());
  }, { timeout: 20_000 }).toBe(true);
  const skipped = Number(await page.getByTestId('run-skipped').textContent());
  expect(skipped).toBeGreaterThan(0);
  const percent = Number((await page.getByTestId('run-percent').textContent())!.replace('%', ''));
  expect(percent).toBeLessThan(100);
  await expect(page.getByTestId('run-eta')).toHaveText('Cancelled');
  await expect(page.getByTestId('summary-skipped')).toContainText(`${skipped} of 24 cells never sent (cancelled)`);
  // the success rate is of the calls sent; the cells never sent stand beside it, not in it
  await expect(page.getByTestId('summary-sent')).toContainText(`of ${24 - skipped} calls sent`);
  await expect(page.getByTestId('no-call-failures')).toContainText('never sent (cancelled)');

  // The runs list: sent cells only, the skipped ones named.
  await page.goto(projectUrl);
  const row = page.getByRole('row', { name: /Cancelled/ });
  await expect(row).toContainText(/· [1-9]\d* skipped/); // the in-flight cells follow the pending ones
  await expect(row).not.toContainText('24 / 24');
});

/** The page's width beyond the viewport (0: nothing scrolls sideways). */
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

test('the main pages have no horizontal scroll at 390 px, and Sign out and the tabs stay reachable', async ({ page }) => {
  test.setTimeout(90_000);
  const projectUrl = await registerWithProject(page, 'E2E narrow screens with a longer project name');
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  const runUrl = page.url();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 60_000 });

  await page.setViewportSize({ width: 390, height: 844 });
  const pages: [string, string][] = [
    ['projects', '/projects'],
    ['runs list', projectUrl],
    ['run page', runUrl],
    ['results grid', `${runUrl}/results`],
    ['datasets', `${projectUrl}/datasets`],
    ['models', `${projectUrl}/models`],
    ['reports', `${projectUrl}/reports`],
  ];
  for (const [name, url] of pages) {
    await page.goto(url);
    await expect(page.locator('main h1, main h2').first()).toBeVisible();
    await page.waitForLoadState('networkidle');
    expect(await overflow(page), `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(0);
    await expect(page.getByRole('button', { name: 'Sign out' })).toBeInViewport();
  }
  // The project's tabs scroll within their own bar: the last one is reachable.
  await page.goto(projectUrl);
  const tabs = page.getByRole('navigation', { name: 'Project sections' });
  const last = tabs.getByRole('link').last();
  await last.scrollIntoViewIfNeeded();
  await expect(last).toBeInViewport();
  expect(await overflow(page)).toBeLessThanOrEqual(0);
});
