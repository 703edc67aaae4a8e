import { expect, test } from '@playwright/test';
import { registerAndSignIn, setScripts } from './helpers';

// The stack's fake provider (playwright.config.ts: ASSAY_FAKE_PORT); its scripts answer
// the judges' prompts, which quote the question under review.
const JUDGE_PROMPT = 'from an evaluation dataset';

function verdict(clarity: number, difficulty: number, overall: number, summary: string): string {
  return JSON.stringify({
    criteria: {
      clarity: { score: clarity, rationale: `Clarity ${clarity}.` },
      difficulty: { score: difficulty, rationale: `Difficulty ${difficulty}.` },
      overall: { score: overall, rationale: `Overall ${overall}.` },
    },
    summary,
  });
}

test.afterEach(async ({ request }) => {
  await setScripts(request, []); // the other specs get the fake's usual echo
});

test('judge mode: two judges rate every question of a dataset, side by side, with their agreement', async ({ page, request }) => {
  test.setTimeout(180_000);
  await setScripts(request, [
    { model: 'fake-fast', pattern: JUDGE_PROMPT, reply: verdict(9, 4, 8, 'Fast judge: crisp and fair.') },
    { model: 'fake-smart', pattern: JUDGE_PROMPT, reply: verdict(7, 6, 6, 'Smart judge: clear enough.') },
  ]);
  await registerAndSignIn(page, 'e2e-judge');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E judge mode');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);

  // The demo run brings the demo dataset (12 questions) and the two fake models.
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'E2E judge mode' }).click();
  await page.getByRole('link', { name: 'Datasets' }).click();
  await page.getByRole('link', { name: 'Demo questions' }).click();

  await page.getByRole('button', { name: 'Judge questions' }).click();
  const dialog = page.getByRole('dialog', { name: 'Judge questions' });
  const judges = dialog.getByRole('group', { name: 'Judge models' });
  await judges.getByLabel(/^Fake Fast/).check();
  await judges.getByLabel(/^Fake Smart/).check();
  await dialog.getByLabel('Relevance').uncheck();
  await dialog.getByLabel('Originality').uncheck();
  await dialog.getByRole('button', { name: 'Start judging' }).click();

  await expect(page).toHaveURL(/\/projects\/\d+\/datasets\/\d+\/judgments\/\d+$/);
  await expect(page.getByRole('heading', { name: 'Question judgments' })).toBeVisible();
  await expect(page.getByTestId('judging-progress')).toHaveText('All 24 ratings are in.', { timeout: 60_000 });

  const table = page.getByRole('table', { name: 'Judgments' });
  await expect(table.getByRole('columnheader')).toHaveText(['#', 'Question', 'Fake Fast', 'Fake Smart']);
  await expect(table.getByRole('row')).toHaveCount(13); // header + 12 questions
  const first = table.getByRole('row').nth(1);
  const [fast, smart] = [first.getByRole('cell').nth(2), first.getByRole('cell').nth(3)];
  await expect(fast.getByTestId('rating-clarity')).toHaveText('9');
  await expect(fast.getByTestId('rating-overall')).toHaveText('8');
  await expect(smart.getByTestId('rating-clarity')).toHaveText('7');
  await expect(smart.getByTestId('rating-difficulty')).toHaveText('6');

  // The justification on keyboard focus.
  await fast.getByRole('button', { name: 'Justification of Fake Fast, question 1' }).focus();
  await expect(page.getByRole('tooltip')).toContainText('Fast judge: crisp and fair.');

  // Every judge gave the same rating to every question, but not the same as the other:
  // the judges disagree systematically.
  const agreement = page.getByRole('table', { name: 'Agreement between judges' });
  await expect(agreement.getByRole('row')).toHaveCount(4); // header + clarity, difficulty, overall
  await expect(agreement.getByTestId('alpha-clarity')).toHaveText(/^-\d\.\d\d$/);
  await expect(agreement.getByRole('row').nth(1)).toContainText('disagree more than chance');
  const means = page.getByRole('table', { name: 'Mean rating per judge' });
  await expect(means.getByRole('row').nth(1)).toContainText('Fake Fast');
  await expect(means.getByRole('row').nth(1)).toContainText('9.0');

  // The dataset lists it among its judgments.
  await page.getByRole('navigation', { name: 'Dataset breadcrumb' }).getByRole('link', { name: 'Demo questions' }).click();
  await page.getByRole('button', { name: 'Judgments' }).click();
  await expect(page.getByRole('table', { name: 'Judgments of this dataset' }).getByRole('link', { name: /^Judge questions: Demo questions/ })).toBeVisible();
});
