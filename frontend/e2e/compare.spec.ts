import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { registerAndSignIn } from './helpers';

// The stack's fake provider (playwright.config.ts: ASSAY_FAKE_PORT; ASSAY_E2E_FAKE_URL when
// the stack runs on other ports): a fault rate of 1 with malformed replies (a final error,
// not retried) makes every call of a run fail.
const FAKE_CONFIG = `${process.env.ASSAY_E2E_FAKE_URL!}/_fake/config`;

async function setFaults(request: APIRequestContext, rate: number) {
  const reply = await request.post(FAKE_CONFIG, { data: { fault_rate: rate, faults: ['malformed'] } });
  expect(reply.ok()).toBeTruthy();
}

/** Starts a demo run from the project's runs list and waits for it to stop; returns its URL. */
async function demoRun(page: Page, projectUrl: string, status: RegExp): Promise<string> {
  await page.goto(projectUrl);
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText(status, { timeout: 90_000 });
  return page.url();
}

test.afterEach(async ({ request }) => {
  await setFaults(request, 0); // the other specs get a healthy fake
});

test('compare two runs of a dataset: fixed, regressed and new fail counters, the paired verdict, the misses list; export CSV, JSON and JUnit', async ({
  page,
  request,
}) => {
  test.setTimeout(240_000);
  await registerAndSignIn(page, 'e2e-compare');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E compare');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  const projectUrl = page.url();

  // Base: every call fails. Head: every call succeeds. Same demo dataset (12 cases, 2 models).
  await setFaults(request, 1);
  const baseUrl = await demoRun(page, projectUrl, /^Failed$/);
  await setFaults(request, 0);
  const headUrl = await demoRun(page, projectUrl, /^Completed$/);
  const baseId = baseUrl.split('/').pop()!;
  const headId = headUrl.split('/').pop()!;

  // Entry point on the runs list; the page picks the newest run as head and the one before as base.
  await page.goto(projectUrl);
  await page.getByRole('link', { name: 'Compare runs' }).click();
  await expect(page).toHaveURL(new RegExp(`/runs/compare\\?.*head=${headId}`));
  await expect(page.getByRole('heading', { level: 1, name: 'Compare runs' })).toBeVisible();
  await expect(page.getByLabel('Head run (after)')).toHaveValue(headId);
  await expect(page.getByLabel('Base run (before)')).toHaveValue(baseId);

  // 12 cases x 2 matched targets, all failed before and passing now.
  await expect(page.getByTestId('count-fixed')).toHaveText('24');
  await expect(page.getByTestId('count-regressed')).toHaveText('0');
  await expect(page.getByTestId('count-new_fail')).toHaveText('0');
  await expect(page.getByTestId('verdict')).toHaveText('Head better');
  await expect(page.getByTestId('difference')).toContainText('+1.000');
  await expect(page.getByTestId('p-value')).not.toHaveText('—');

  // The misses list: each entry opens the case in the head run.
  const misses = page.getByRole('list', { name: 'Misses list' });
  await expect(misses.getByRole('listitem').first()).toContainText('Fixed');
  const caseLink = misses.getByRole('link', { name: /^Open case #\d+/ }).first();
  const href = await caseLink.getAttribute('href');
  expect(href).toMatch(new RegExp(`^/projects/\\d+/runs/${headId}/cases/\\d+$`));

  // Swapped (keyboard-reachable button): the same cells now count as regressed, base better.
  await page.getByRole('button', { name: 'Swap base and head runs' }).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('count-regressed')).toHaveText('24');
  await expect(page.getByTestId('count-fixed')).toHaveText('0');
  await expect(page.getByTestId('verdict')).toHaveText('Base better');
  await page.getByLabel('Show').selectOption('regressed');
  await expect(misses.getByRole('listitem').first()).toContainText('Regressed');

  await caseLink.click();
  await expect(page).toHaveURL(new RegExp(`/projects/\\d+/runs/${baseId}/cases/\\d+$`));

  // Exports from the run page: real downloads with the server's file name and content type.
  await page.goto(headUrl);
  await page.getByRole('link', { name: 'Compare', exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/runs/compare\\?.*head=${headId}`));
  await expect(page.getByTestId('count-fixed')).toHaveText('24');
  await page.goto(headUrl);
  const expected = [
    { name: 'CSV', ext: 'csv', type: /^text\/csv/, starts: /^output_id,case_id,/ },
    { name: 'JSON', ext: 'json', type: /^application\/json/, starts: /^\{/ },
    { name: 'JUnit XML', ext: 'xml', type: /^application\/xml/, starts: /^<\?xml|^<testsuites/ },
  ];
  for (const e of expected) {
    const link = page.getByRole('link', { name: `Download results as ${e.name}` });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toMatch(new RegExp(`^run-${headId}-Demo-run\\.${e.ext}$`));
    const reply = await page.request.get((await link.getAttribute('href'))!);
    expect(reply.status()).toBe(200);
    expect(reply.headers()['content-type']).toMatch(e.type);
    expect((await reply.text()).trimStart()).toMatch(e.starts);
  }
});

/** A pairwise judge of the project, through the API with the browser's session (and CSRF token). */
async function createPairwiseJudge(page: Page, projectId: string) {
  const csrf = (await page.context().cookies()).find((c) => c.name === 'assay_csrf')?.value ?? '';
  const reply = await page.request.post(`/api/projects/${projectId}/scorers`, {
    headers: { 'X-CSRF-Token': decodeURIComponent(csrf) },
    data: { name: 'Which is better', kind: 'pairwise_judge', params: { judges: ['Fake Fast'] } },
  });
  expect(reply.status(), await reply.text()).toBe(201);
}

test('judge two runs pairwise from the compare page: a target of each, progress, ratings and position bias', async ({ page }) => {
  test.setTimeout(180_000);
  await registerAndSignIn(page, 'e2e-compare');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E judge runs');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  const projectUrl = page.url();
  const projectId = projectUrl.split('/').pop()!;
  const baseId = (await demoRun(page, projectUrl, /^Completed$/)).split('/').pop()!;
  const headId = (await demoRun(page, projectUrl, /^Completed$/)).split('/').pop()!;
  await createPairwiseJudge(page, projectId);

  await page.goto(`${projectUrl}/runs/compare?head=${headId}&base=${baseId}`);
  await expect(page.getByText(/No pairwise judgements of these two runs yet/)).toBeVisible();
  await page.getByRole('button', { name: 'Judge pairwise' }).click();
  const dialog = page.getByRole('dialog', { name: 'Judge the two runs pairwise' });
  await expect(dialog.getByLabel('Pairwise judge')).toHaveValue(/\d+/);
  await dialog.getByLabel('Target of the head run (A)').selectOption({ label: 'Fake Smart' });
  await dialog.getByLabel('Target of the base run (B)').selectOption({ label: 'Fake Fast' });
  await dialog.getByRole('button', { name: 'Start judging' }).click();

  // The demo dataset's 12 cases, one judge: 12 judgements, each asked in both orders.
  await expect(page.getByTestId('pairwise-progress')).toContainText('12 of 12 judgements · done', { timeout: 60_000 });
  const ratings = page.getByRole('table', { name: 'Bradley–Terry ratings' });
  await expect(ratings.getByRole('row')).toHaveCount(3); // header + the two judged targets
  await expect(ratings).toContainText(`Demo run #${headId} · Fake Smart`);
  await expect(ratings).toContainText(`Demo run #${baseId} · Fake Fast`);
  await expect(page.getByTestId('pair-row')).toContainText(`Demo run #${headId} · Fake Smart vs Demo run #${baseId} · Fake Fast`);
  await expect(page.getByTestId('position-bias')).toHaveText(/\d+%/);

  // At phone width the page does not scroll sideways (the tables scroll inside their card).
  await page.setViewportSize({ width: 390, height: 900 });
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
});
