import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { setScripts, signUpWithProject } from './helpers';

// The stack's fake provider: its scripts answer the rubric judge's prompt with a verdict.
const VERDICT = JSON.stringify({
  criteria: {
    Accuracy: { score: 4, rationale: 'Mostly right.' },
    Clarity: { score: 5, rationale: 'Very clear.' },
  },
  summary: 'A good answer.',
  confidence: 0.8,
});
const GOOD_RULES = `rules:
  - id: no_refund_promises
    when: agent_says("refund")
    action: fail
    severity: high
`;
const BAD_RULES = GOOD_RULES.replace('severity: high', 'severity: huge');


async function openScorers(page: Page) {
  await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Scorers' }).click();
  await expect(page.getByRole('heading', { name: 'Scorers', exact: true })).toBeVisible();
}

async function startScorer(page: Page, name: string, kind: string) {
  await page.getByRole('link', { name: 'New scorer' }).first().click();
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Kind', { exact: true }).selectOption(kind);
}

async function create(page: Page, name: string) {
  await page.getByRole('button', { name: 'Create scorer' }).click();
  await expect(page).toHaveURL(/\/scorers$/);
  await expect(page.getByRole('table', { name: 'Scorers' }).getByRole('link', { name, exact: true })).toBeVisible();
}

/** No WCAG 2.1 A/AA violation that axe-core finds (as e2e/a11y.spec.ts checks the other pages). */
async function expectNoViolations(page: Page, name: string) {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const found = results.violations.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(found, `accessibility violations on ${name}`).toEqual([]);
}

/** What this page draws does not run past a phone's width (the app header is another item of issue 14). */
async function expectNoSideScroll(page: Page, shot: string) {
  const { scroll, client } = await page.evaluate(() => {
    // Overflow inside a scrolling box (the tab strip, a wide table) is that box's, not the page's.
    const main = document.querySelector('main')!;
    return { scroll: main.scrollWidth, client: document.documentElement.clientWidth };
  });
  if (process.env.SCORERS_SHOTS) await page.screenshot({ path: `${process.env.SCORERS_SHOTS}/${shot}.png`, fullPage: true });
  expect(scroll).toBeLessThanOrEqual(client);
}

async function replaceRules(page: Page, text: string) {
  const editor = page.getByTestId('rules-editor').locator('.cm-content');
  await editor.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

test.afterEach(async ({ request }) => {
  await setScripts(request, []); // the other specs get the fake's usual echo
});

test('every family of scorer kinds is created in the UI; a YAML error shows inline, then is fixed', async ({ page }) => {
  test.setTimeout(120_000);
  await signUpWithProject(page, 'e2e-scorers', 'E2E scorers');
  // The demo run brings the two fake models the judges pick from.
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'E2E scorers' }).click();
  await openScorers(page);
  await expect(page.getByText('No scorers yet')).toBeVisible();

  // Bad input: the 422's field error is shown next to the field, and what was typed stays.
  await startScorer(page, 'Mentions Paris', 'contains');
  await page.getByRole('button', { name: 'Create scorer' }).click();
  await expect(page.getByLabel(/^Value/)).toHaveAccessibleDescription('Missing required field');
  await expect(page.getByLabel(/^Value/)).toBeFocused();
  await expect(page.getByLabel('Name', { exact: true })).toHaveValue('Mentions Paris');
  await page.getByLabel(/^Value/).fill('Paris');
  await create(page, 'Mentions Paris');

  await startScorer(page, 'Answer shape', 'json_schema');
  await page.getByLabel(/^Schema/).fill('true');
  await page.getByLabel(/^Allow fenced/).check();
  await create(page, 'Answer shape');

  // Rules: the server's line/column problem is shown in the editor and listed; then fixed.
  await startScorer(page, 'Refund rules', 'rules');
  await replaceRules(page, BAD_RULES);
  await page.getByRole('button', { name: 'Create scorer' }).click();
  const problem = page.getByRole('list', { name: 'Problems in the rules' }).getByRole('button');
  await expect(problem).toHaveText(/^Line 5, column 15: .*huge/);
  await expect(page.locator('.cm-lintRange-error')).toHaveCount(1);
  await expect(page.getByLabel('Name', { exact: true })).toHaveValue('Refund rules');
  await replaceRules(page, GOOD_RULES);
  await create(page, 'Refund rules');

  await startScorer(page, 'PII check', 'safety');
  await page.getByLabel(/^Action/).selectOption('block');
  await create(page, 'PII check');

  // A rubric judge: the weight sum must reach 1 before the server accepts it.
  await startScorer(page, 'Quality judge', 'llm_judge');
  await page.getByRole('group', { name: 'Judge models' }).getByLabel(/^Fake Fast/).check();
  await page.getByRole('group', { name: 'Judge models' }).getByLabel(/^Fake Smart/).check();
  await expect(page.getByTestId('weight-sum')).toHaveText(/sum to 1\.00 ✓/);
  await page.getByLabel('Weight').first().fill('0.7');
  await expect(page.getByTestId('weight-sum')).toHaveText(/sum to 1\.20 — they must sum to 1\.00/);
  await page.getByRole('button', { name: 'Create scorer' }).click();
  await expect(page.getByText(/weights sum to 1\.200/)).toBeVisible(); // the server's 422, next to the rubric
  await page.getByLabel('Weight').first().fill('0.5');
  await expect(page.getByTestId('weight-sum')).toHaveText(/sum to 1\.00 ✓/);
  await create(page, 'Quality judge');

  await startScorer(page, 'RAG quality', 'rag_metrics');
  await page.getByRole('group', { name: 'Judge models' }).getByLabel(/^Fake Smart/).check();
  await create(page, 'RAG quality');

  await startScorer(page, 'Head to head', 'pairwise_judge');
  await page.getByRole('group', { name: 'Judge models' }).getByLabel(/^Fake Fast/).check();
  await page.getByLabel('Response 1').fill('Response one.');
  await page.getByLabel('Response 2').fill('Response two.');
  await page.getByRole('button', { name: 'Preview judge prompt' }).click();
  const pairPrompt = page.getByRole('region', { name: 'Judge prompt preview' });
  await expect(pairPrompt).toContainText('Response one.');
  await create(page, 'Head to head');

  await startScorer(page, 'Reviewer scores', 'manual');
  await page.getByLabel(/^Scale/).selectOption('criteria');
  await page.getByLabel(/^Criteria/).fill('accuracy\ntone');
  await create(page, 'Reviewer scores');

  // Code execution is off in a new project: the kind is shown, disabled, with why.
  await page.getByRole('link', { name: 'New scorer' }).first().click();
  // shown by its human name, disabled, saying why (the full notice only once chosen)
  const codeKind = page.getByRole('option', { name: /^Code execution/ });
  await expect(codeKind).toBeDisabled();
  await expect(codeKind).toContainText('not allowed in this project');
  await page.getByRole('link', { name: 'Cancel' }).click();

  // Filter by kind, once the list is back: the editor has a "Kind" field of its own, and
  // choosing there before the page changed was lost with it.
  await expect(page.getByRole('table', { name: 'Scorers' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Cancel' })).toHaveCount(0);
  await page.getByLabel('Kind').selectOption('rules');
  await expect(page.getByRole('table', { name: 'Scorers' }).getByRole('row')).toHaveCount(2);
});

test('a judge is previewed and tried on one output with its cost; edit makes a version; archive and restore', async ({ page, request }) => {
  test.setTimeout(120_000);
  await setScripts(request, [{ model: 'fake-fast', pattern: 'output under test', reply: VERDICT }]);
  await signUpWithProject(page, 'e2e-scorers', 'E2E judge trial');
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'E2E judge trial' }).click();
  await openScorers(page);

  await startScorer(page, 'Judge', 'llm_judge');
  await page.getByRole('group', { name: 'Judge models' }).getByLabel(/^Fake Fast/).check();
  await page.getByLabel(/^Pass threshold/).fill('0.7');
  await page.getByLabel('Sample output').fill('Paris is the capital of France.');
  await page.getByRole('button', { name: 'Preview judge prompt' }).click();
  const prompt = page.getByRole('region', { name: 'Judge prompt preview' });
  await expect(prompt).toContainText('Paris is the capital of France.');
  await expect(prompt).toContainText('Accuracy');

  await page.getByRole('button', { name: 'Try on this text' }).click();
  const result = page.getByRole('region', { name: 'Trial result' });
  await expect(result).toContainText('Pass');
  await expect(result).toContainText('Score 0.88'); // (0.75 + 1.0) / 2
  await expect(result).toContainText(/Cost: \$0\.\d+ over 1 judge call/);

  // The same on a recorded output of the demo run.
  await page.getByLabel('An output of a run').check();
  await page.getByLabel('Run', { exact: true }).selectOption({ index: 1 });
  await page.getByLabel('Output', { exact: true }).selectOption({ index: 1 });
  await page.getByRole('button', { name: 'Try on this output' }).click();
  await expect(result).toContainText(/Cost: \$0\.\d+ over 1 judge call/);
  await create(page, 'Judge');

  await page.getByRole('link', { name: 'Judge', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Edit Judge' })).toBeVisible();
  await page.getByLabel('Criterion 1 name').fill('Correctness');
  await page.getByLabel(/^Version note/).fill('Renamed a criterion');
  await page.getByRole('button', { name: 'Save new version' }).click();
  await expect(page).toHaveURL(/\/scorers$/);
  const row = page.getByRole('row', { name: /Judge/ });
  await expect(row.getByRole('cell', { name: 'v2' })).toBeVisible();
  await page.getByRole('link', { name: 'Judge', exact: true }).click();
  await expect(page.getByRole('region', { name: 'Versions' })).toContainText('v2');
  await expect(page.getByRole('region', { name: 'Versions' })).toContainText('Renamed a criterion');
  await page.getByRole('link', { name: '← All scorers' }).click();

  await page.getByRole('button', { name: 'Archive Judge' }).click();
  await expect(page.getByText('No scorers yet')).toBeVisible();
  await page.getByLabel('Show archived').check();
  await expect(row.getByText('Archived')).toBeVisible();
  await page.getByRole('button', { name: 'Restore Judge' }).click();
  await expect(row.getByText('Active')).toBeVisible();

  await expectNoViolations(page, 'scorers list');

  await page.setViewportSize({ width: 390, height: 844 });
  await expectNoSideScroll(page, 'scorers-list-390');
  await page.getByRole('link', { name: 'Judge', exact: true }).click();
  await expect(page.getByTestId('weight-sum')).toBeVisible();
  await page.getByLabel('Sample output').fill('A long sample output '.repeat(20));
  await page.getByRole('button', { name: 'Preview judge prompt' }).click();
  await expect(page.getByRole('region', { name: 'Judge prompt preview' })).toBeVisible();
  await expectNoSideScroll(page, 'scorer-judge-390');
  await expectNoViolations(page, 'judge editor');
  await page.getByRole('link', { name: '← All scorers' }).click();
  await startScorer(page, 'Rules at 390', 'rules');
  await replaceRules(page, BAD_RULES);
  await page.getByRole('button', { name: 'Create scorer' }).click();
  await expect(page.getByRole('list', { name: 'Problems in the rules' })).toBeVisible();
  await expectNoSideScroll(page, 'scorer-rules-390');
  await expectNoViolations(page, 'rules editor');
});
