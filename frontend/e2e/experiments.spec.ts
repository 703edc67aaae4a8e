import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { addFakeModel, addFakeProvider, setScripts, signUpWithProject } from './helpers';

// The experiment loop end to end on the fake provider: a template fills the wizard, the
// refiner is scripted (one diff per prompt version), the judges are the fake's own.

const SHOTS = process.env.EXP_SHOTS; // a folder: screenshots of the key screens for a walk

async function shot(page: Page, name: string) {
  if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}-${page.viewportSize()?.width}.png`, fullPage: true });
}

async function noSidewaysScroll(page: Page) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
}

/** A ten-line prompt using the template's variables, so one changed line stays within the guardrails. */
function seedPrompt(vars: string[]): string[] {
  const v = vars.length ? vars : ['question'];
  return [
    'You are a support agent for Acme, a company that sells home appliances.',
    `The customer writes: ${v.map((x) => `{{${x}}}`).join(' ')}`,
    'Read the message carefully before you answer it.',
    'Answer in plain words and stay on the topic of the message.',
    'Keep the reply short and friendly.',
    'Offer one concrete next step the customer can take today.',
    'If you do not know the answer, say so and offer to escalate.',
    'Never promise refunds or replacements you cannot confirm.',
    'Do not ask for passwords or payment details.',
    'Close with a polite sign-off from the Acme support team.',
  ];
}

/** A unified diff replacing line `at` (1-based) of `lines` with `next`. */
function lineDiff(lines: string[], at: number, next: string): string {
  const i = at - 1;
  return [
    '--- a/prompt.txt',
    '+++ b/prompt.txt',
    `@@ -${at - 1},3 +${at - 1},3 @@`,
    ` ${lines[i - 1]}`,
    `-${lines[i]}`,
    `+${next}`,
    ` ${lines[i + 1]}`,
    '',
  ].join('\n');
}

const refinerReply = (diff: string, note: string) => `<diff>\n${diff}</diff>\n\n<note>\n${note}\n</note>`;

test('template → wizard → iteration 1 → review with keys → approve → iteration 2 → stop → final report → PDF', async ({ page, request }) => {
  test.setTimeout(300_000);
  const projectId = await signUpWithProject(page, 'e2e-exp', 'E2E experiments');
  await addFakeProvider(page);
  await addFakeModel(page, 'Fake mini', 'fake-mini');

  // The list's empty state, then a template.
  const tabs = page.getByRole('navigation', { name: 'Project sections' });
  await tabs.getByRole('link', { name: 'Experiments' }).click();
  await expect(page.getByText('No experiments yet')).toBeVisible();
  await page.getByRole('link', { name: '+ New experiment' }).first().click();
  await page.getByRole('region', { name: 'Templates' }).getByRole('button', { name: /Customer Support/i }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/experiments/\\d+/edit`));
  const objective = page.getByLabel('What are you trying to achieve with this prompt?');
  await expect(objective).not.toHaveValue('');
  await expect(page.getByTestId('save-state')).not.toHaveText(/Not saved/);
  await shot(page, '1-wizard-objective');

  // AI assist: three objective options from hints, the call's cost shown, one used.
  const option = 'Answer customer questions about orders with empathy, one concrete next step and a polite close.';
  await setScripts(request, [
    { pattern: 'objective options', reply: JSON.stringify({ options: [1, 2, 3].map((i) => ({ title: `Option ${i}`, text: `${option} (${i})` })) }) },
  ]);
  await page.getByRole('region', { name: 'AI assist' }).getByRole('button', { name: 'Draft 3 options' }).click();
  await expect(page.getByTestId('assist-cost')).toContainText('Last call cost $');
  await page.getByRole('button', { name: 'Use Option 2' }).click();
  await expect(objective).toHaveValue(`${option} (2)`);

  // Step 1 → 2: the rubric comes from the template and sums to 1.
  await page.getByRole('button', { name: 'Continue →' }).click();
  await expect(page.getByRole('heading', { name: 'Step 2 of 7: Rubric' })).toBeVisible();
  await expect(page.getByTestId('weight-sum')).toContainText('1.00 ✓');
  // A bad weight is caught before the server is asked; fixing it clears the error.
  const firstWeight = page.getByLabel('Weight').first();
  const weight = await firstWeight.inputValue();
  await firstWeight.fill('0.9');
  await page.getByRole('button', { name: 'Continue →' }).click();
  await expect(page.getByRole('alert').filter({ hasText: /Weights must sum to 1.0/ })).toBeVisible();
  await firstWeight.fill(weight);
  await page.getByRole('button', { name: 'Continue →' }).click();

  // Step 3: our own ten-line prompt on the template's variables.
  await expect(page.getByRole('heading', { name: 'Step 3 of 7: Seed prompt' })).toBeVisible();
  const promptBox = page.getByLabel('Prompt', { exact: true });
  const vars = [...(await promptBox.inputValue()).matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).filter((v, i, a) => a.indexOf(v) === i);
  const v1 = seedPrompt(vars);
  await promptBox.fill(v1.join('\n'));
  await page.getByRole('button', { name: 'Continue →' }).click();

  // Step 4: the template's sample cases (or the first dataset version).
  await expect(page.getByRole('heading', { name: 'Step 4 of 7: Test data' })).toBeVisible();
  const version = page.getByLabel('Version');
  if (!(await version.isVisible())) {
    await page.getByLabel('Dataset').selectOption({ index: 1 });
  }
  if ((await version.inputValue()) === '') await version.selectOption({ index: 1 });
  await page.getByRole('button', { name: 'Continue →' }).click();

  // Step 5: one model; the estimate shows a range.
  await expect(page.getByRole('heading', { name: 'Step 5 of 7: Models & parameters' })).toBeVisible();
  await page.getByRole('checkbox', { name: 'Fake mini' }).check();
  await page.getByRole('button', { name: 'Continue →' }).click();
  await expect(page.getByRole('heading', { name: 'Step 6 of 7: Judges & safety' })).toBeVisible();
  await page.getByRole('checkbox', { name: 'Judge with Fake mini' }).check();
  await page.getByRole('button', { name: 'Continue →' }).click();

  // Step 7: two iterations, then the loop stops by itself.
  await expect(page.getByRole('heading', { name: 'Step 7 of 7: Stop rules & budget' })).toBeVisible();
  await page.getByLabel('Maximum iterations').fill('2');
  await page.getByLabel('Maximum spend ($)').fill('5');
  await expect(page.getByTestId('estimate-range')).toContainText('$');
  await shot(page, '2-wizard-stop-rules');
  await page.setViewportSize({ width: 390, height: 844 });
  await noSidewaysScroll(page);
  await shot(page, '2-wizard-stop-rules');
  await page.setViewportSize({ width: 1280, height: 800 });

  // The refiner: one diff for v1, one for v2 (the v2 script first: scripts match in order).
  const v2line = 'Keep the reply short and friendly, and acknowledge how the customer feels first.';
  const v2 = v1.map((l, i) => (i === 4 ? v2line : l));
  const v3line = 'Offer one concrete next step the customer can take today, with where to click.';
  await setScripts(request, [
    { pattern: "Prompt Refinement Task[\\s\\S]*acknowledge how the customer feels first", reply: refinerReply(lineDiff(v2, 6, v3line), 'Make the next step actionable.') },
    { pattern: 'Prompt Refinement Task', reply: refinerReply(lineDiff(v1, 5, v2line), 'Acknowledge feelings to lift Empathy.') },
  ]);

  await page.getByRole('button', { name: 'Create experiment →' }).click();
  const confirm = page.getByRole('dialog', { name: 'Create experiment?' });
  await expect(confirm).toContainText('Estimated cost: $');
  await confirm.getByRole('button', { name: 'Create & run →' }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/experiments/\\d+$`));
  const experimentUrl = page.url();

  // Iteration 1 runs live; its suggestion becomes ready.
  await expect(page.getByRole('region', { name: 'Live progress' })).toBeVisible();
  await page.getByRole('link', { name: 'Review suggestion' }).click({ timeout: 120_000 });
  await expect(page.getByRole('heading', { name: /Review refinement — iteration 1/ })).toBeVisible();
  await expect(page.getByTestId('suggestion-note')).toContainText('Acknowledge feelings');
  await expect(page.getByTestId('diff-view').locator('[data-kind="add"]')).toContainText('acknowledge how the customer feels first');
  await shot(page, '3-review');

  // Keys: "," opens reject (Escape closes it), typing "." in the comment does not approve, "." approves.
  await page.locator('body').press(',');
  await expect(page.getByRole('dialog', { name: 'Reject the suggestion' })).toBeVisible();
  await page.keyboard.press('Escape');
  await page.getByLabel('Comment (optional, audited)').fill('Looks right.');
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await page.getByRole('heading', { name: /Review refinement/ }).click();
  await page.keyboard.press('.');
  await expect(page).toHaveURL(experimentUrl);

  // Iteration 2 runs on v2; with at most two iterations the loop stops by its rule.
  await expect(page.getByRole('button', { name: 'Iteration 2' })).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('stop-reason')).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('kpi-composite')).toContainText('[');
  await expect(page.getByTestId('trend-chart')).toBeVisible();

  // Facets on the held-out cases the refiner never saw, each cell with its interval.
  const facets = page.getByTestId('iteration-facets');
  await facets.locator('label', { hasText: 'Held-out set' }).click();
  await expect(facets.getByRole('radio', { name: 'Held-out set' })).toBeChecked();
  await expect(facets.getByTestId('facet-split-summary')).toContainText(/Held-out set \(never shown to the refiner\): \d+ cases/);
  await facets.getByLabel('Facet', { exact: true }).selectOption({ label: 'Input length' });
  await expect(facets.getByRole('table', { name: /Mean score by model and input length/ })).toContainText('n=');
  // Side by side: both iterations' outputs, read again once iteration 2's run ended
  const sxs = page.getByRole('region', { name: 'Side-by-side outputs' });
  await expect(sxs.locator('article').first()).toContainText('fake-mini says');
  await expect(sxs.locator('article').last()).toContainText('fake-mini says');
  await shot(page, '4-experiment-stopped');

  // The final report and its PDF.
  await page.getByRole('link', { name: 'Final report' }).click();
  await expect(page.getByRole('heading', { name: /Final report/ })).toBeVisible();
  await expect(page.getByTestId('report-iterations')).toHaveText('2');
  await expect(page.getByTestId('report-delta')).toContainText('[');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Report (PDF)' }).click()]);
  expect(download.suggestedFilename()).toMatch(/\.pdf$/);
  const path = await download.path();
  expect(readFileSync(path).subarray(0, 5).toString()).toBe('%PDF-');
  await shot(page, '5-final-report');
  await page.setViewportSize({ width: 390, height: 844 });
  await noSidewaysScroll(page);
  await shot(page, '5-final-report');
  await page.goto(experimentUrl);
  await expect(page.getByTestId('stop-reason')).toBeVisible();
  await noSidewaysScroll(page);
  await shot(page, '4-experiment-stopped');
});
