import { expect, test, type Page } from '@playwright/test';
import { signUpWithProject } from './helpers';

// No write is lost (issue 31): a template chosen while the first keystrokes are still being
// saved gives one experiment holding the template's content, and two tabs on one draft
// merge what each changed, asking only about a field both changed.

const OBJECTIVE = 'What are you trying to achieve with this prompt?';

type Draft = { id: number; name: string; row_version: number; config: { objective?: { goal?: string }; rubric?: { criteria?: unknown[] } } };

async function drafts(page: Page, projectId: string): Promise<Draft[]> {
  const reply = await page.request.get(`/api/projects/${projectId}/experiments?page_size=100`);
  expect(reply.ok()).toBeTruthy();
  const body = await reply.json();
  const items: { id: number }[] = body.items ?? body;
  return Promise.all(
    items.map(async (e) => {
      const one = await page.request.get(`/api/projects/${projectId}/experiments/${e.id}`);
      return (await one.json()) as Draft;
    }),
  );
}

test('a template chosen right after typing keeps one experiment, with the template’s content', async ({ page }) => {
  const projectId = await signUpWithProject(page, 'e2e-stale', 'Stale writes');
  const templates = await (await page.request.get(`/api/projects/${projectId}/experiment-templates`)).json();
  const support = (templates as { key?: string; slug?: string; objective: string }[]).find((t) => /support/i.test(t.key ?? t.slug ?? ''))!;
  expect(support).toBeTruthy();

  await page.goto(`/projects/${projectId}/experiments/new`);
  // keystrokes one by one: the first creates the draft, the rest queue autosaves behind it
  await page.getByLabel(OBJECTIVE).pressSequentially('Typed before a template was chosen', { delay: 15 });
  await page.getByRole('region', { name: 'Templates' }).getByRole('button', { name: /Customer Support/i }).click();

  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/experiments/\\d+/edit`));
  await expect(page.getByLabel(OBJECTIVE)).toHaveValue(support.objective);
  await page.waitForTimeout(3000); // longer than the autosave's debounce: a stale save would land now

  const all = await drafts(page, projectId);
  expect(all).toHaveLength(1);
  expect(all[0].config.objective?.goal).toBe(support.objective);
  expect(all[0].config.rubric?.criteria?.length ?? 0).toBeGreaterThan(0);

  await page.reload();
  await expect(page.getByLabel(OBJECTIVE)).toHaveValue(support.objective);
});

test('two tabs on one draft: changes to different fields merge, the same field asks', async ({ page, context }) => {
  const projectId = await signUpWithProject(page, 'e2e-tabs', 'Two tabs');
  const stored = async () => (await drafts(page, projectId))[0];
  await page.goto(`/projects/${projectId}/experiments/new`);
  const first = 'Answer billing questions clearly and kindly, with one next step.';
  await page.getByLabel(OBJECTIVE).fill(first);
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/experiments/\\d+/edit`));
  await expect.poll(async () => (await stored())?.config.objective?.goal).toBe(first);
  const editUrl = page.url();

  const other = await context.newPage();
  await other.goto(editUrl);
  await expect(other.getByLabel(OBJECTIVE)).toHaveValue(first);

  // tab 1 renames; tab 2, still on the older version, changes the objective: both kept
  await page.getByLabel('Experiment name').fill('Billing answers');
  await expect.poll(async () => (await stored()).name).toBe('Billing answers');
  const second = 'Answer billing questions in two sentences, naming the invoice.';
  await other.getByLabel(OBJECTIVE).fill(second);
  await expect.poll(async () => (await stored()).config.objective?.goal).toBe(second);
  expect((await stored()).name).toBe('Billing answers');
  await expect(other.getByLabel('Experiment name')).toHaveValue('Billing answers');
  await expect(other.getByRole('dialog', { name: 'This draft was changed elsewhere' })).toBeHidden();

  // tab 1, now on an older version, changes the objective too: it asks, and its choice is stored
  const mine = 'Tab one: answer billing questions with a link to the refund policy.';
  await page.getByLabel(OBJECTIVE).fill(mine);
  const ask = page.getByRole('dialog', { name: 'This draft was changed elsewhere' });
  await expect(ask).toBeVisible();
  await expect(ask).toContainText('objective');
  expect((await stored()).config.objective?.goal).toBe(second); // nothing overwritten while it asks
  await ask.getByRole('button', { name: 'Keep mine' }).click();
  await expect.poll(async () => (await stored()).config.objective?.goal).toBe(mine);

  // tab 2, stale in turn, keeps theirs: its form shows tab 1's text and nothing of its own is stored
  await other.getByLabel(OBJECTIVE).fill('Tab two: answer billing questions and offer a callback.');
  const asks = other.getByRole('dialog', { name: 'This draft was changed elsewhere' });
  await expect(asks).toBeVisible();
  await asks.getByRole('button', { name: 'Keep theirs' }).click();
  await expect(other.getByLabel(OBJECTIVE)).toHaveValue(mine);
  await other.waitForTimeout(2000);
  const last = await stored();
  expect(last.config.objective?.goal).toBe(mine);
  expect(last.name).toBe('Billing answers');
});

test('a review score from a stale tab overwrites nothing: it says so, and Keep mine replaces it', async ({ page, context }) => {
  test.setTimeout(180_000);
  const projectId = await signUpWithProject(page, 'e2e-stale-review', 'Stale review');
  const csrf = (await context.cookies()).find((c) => c.name === 'assay_csrf')?.value ?? '';
  const made = await page.request.post(`/api/projects/${projectId}/scorers`, {
    headers: { 'X-CSRF-Token': csrf },
    data: { name: 'Helpfulness', kind: 'manual', params: { scale: '1-5' } },
  });
  expect(made.status()).toBe(201);
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  const review = `${page.url()}/review`;

  // both tabs show the first output unscored
  await page.goto(review);
  const other = await context.newPage();
  await other.goto(review);
  for (const tab of [page, other]) {
    await expect(tab.getByTestId('review-position')).toContainText('Case 1 of 12 · output 1 of 2');
    await expect(tab.getByTestId('my-score')).toContainText('none yet');
  }

  await page.keyboard.press('4');
  await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toBeVisible();

  // the other tab, still on "none yet", scores it 2: refused, the 4 stays
  await other.keyboard.press('2');
  const notice = other.getByRole('alert').filter({ hasText: 'This was changed elsewhere' });
  await expect(notice).toBeVisible();
  await page.reload();
  await expect(page.getByTestId('my-score')).toContainText('4');

  await notice.getByRole('button', { name: 'Keep mine' }).click();
  await expect(notice).toBeHidden();
  await page.reload();
  await expect(page.getByTestId('my-score')).toContainText('2');
});
