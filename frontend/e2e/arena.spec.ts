import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { addFakeModel, addFakeProvider, setScripts, signUpWithProject } from './helpers';

// EvalArena end to end on the seeded "refund-verification" challenge: the rules tab from a
// broken draft to Completed, then the judge tab on a scripted fake judge.
const CID = 'refund-verification';
const fixture = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../../tests/fixtures/challenges/${CID}/${name}`, import.meta.url)), 'utf8');

const BROKEN = 'rules:\n  - id: first_try\n    when: user_requests("refund")\n    severity: [high\n';
const FIRST_TRY = 'rules:\n  - id: first_try\n    when: user_requests("refund")\n    require: tool_called("issue_refund")\n    severity: high\n';
const CRITIQUE = 'E2E critique: the rubric never says what counts as evidence that the identity was verified.';

/** WCAG 2.1 A/AA rules of axe-core, as e2e/a11y.spec.ts checks the other pages. */
async function expectNoViolations(page: Page, name: string) {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const found = results.violations.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(found, `accessibility violations on ${name}`).toEqual([]);
}

/** Replaces the editor's text as a paste would (no auto-indent). */
async function setEditor(page: Page, text: string) {
  const content = page.getByTestId('rules-editor').locator('.cm-content');
  await content.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(text);
}

test('rules tab: inline error, run, jump to a miss, fix, ship, Completed; judge tab with its critique', async ({ page, request }) => {
  await signUpWithProject(page, 'arena', 'Arena judges');
  await addFakeProvider(page);
  await addFakeModel(page, 'Arena judge', 'arena-e2e-judge');

  // Library → challenge
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Arena' }).click();
  await expect(page.getByRole('heading', { name: 'EvalArena' })).toBeVisible();
  await page.getByLabel('Search challenges').fill('refund');
  const card = page.getByTestId('challenge-card').filter({ hasText: CID });
  await expect(card).toHaveCount(1);
  await expect(card.getByText('Debug baseline')).toBeVisible();
  await expectNoViolations(page, 'arena library');
  await card.getByRole('link', { name: /^Start / }).click();
  await expect(page).toHaveURL(new RegExp(`/arena/${CID}$`));
  await expect(page.getByRole('heading', { name: 'Refund verification' })).toBeVisible();

  // A YAML error is shown inline (gutter, underline and the list) before any run
  await setEditor(page, BROKEN);
  const problems = page.getByTestId('editor-problems');
  await expect(problems).toContainText(/Line \d+, column \d+:/);
  await expect(page.getByTestId('rules-editor').locator('.cm-lint-marker-error').first()).toBeVisible();
  const run = page.getByRole('button', { name: /Run \(Dev set\)/ });
  await expect(run).toBeDisabled();

  // Fixed: the problems go, and Ctrl/Cmd+Enter in the editor runs the dev set
  await setEditor(page, FIRST_TRY);
  await expect(problems).toBeHidden();
  await expect(run).toBeEnabled();
  await page.keyboard.press('ControlOrMeta+Enter');
  const dev = page.getByTestId('summary-dev');
  await expect(dev.getByTestId('gate')).toHaveText(/Blocked/);
  await expect(dev).toContainText('A trace passes when your eval agrees with its label');

  // A false alarm opens its trace, scrolled to the flagged message, highlighted
  const alarm = page.getByRole('region', { name: 'False alarms' }).getByRole('button').first();
  const alarmId = (await alarm.locator('.font-mono').first().textContent())!.trim();
  await alarm.click();
  await expect(page.getByLabel(/^Ticket/)).toHaveValue(alarmId);
  const flagged = page.locator(`[id^="arena-${alarmId}-message-"][data-evidence]`).first();
  await expect(flagged).toBeInViewport();
  await expect(flagged).toHaveAttribute('data-evidence', /bad|warn/);
  await expectNoViolations(page, 'arena workspace after a run');

  // Improve: the diff counts what got fixed, and the dev gate opens
  await setEditor(page, fixture('overfit.rules.yaml'));
  await expect(run).toBeEnabled();
  await run.click();
  await expect(dev.getByTestId('gate')).toHaveText(/Dev ready/);
  await expect(page.getByTestId('dev-results').getByTestId('diff-fixed')).not.toContainText(/^\D*0\D*$/);

  // Ship to Prod: the memorised rules fail the hidden set; the report is redacted
  await page.getByRole('button', { name: 'Ship to Prod (Hidden)' }).click();
  const prod = page.getByTestId('summary-prod');
  await expect(prod.getByTestId('gate')).toHaveText(/Blocked/);
  const entry = page.getByTestId('report-entry').first();
  await expect(entry).toBeVisible();
  await expect(entry).toContainText('■');

  // The reference generalises: Prod ready, and the library says Completed
  await setEditor(page, fixture('reference.rules.yaml'));
  await expect(run).toBeEnabled();
  await page.keyboard.press('ControlOrMeta+Shift+Enter');
  await expect(prod.getByTestId('gate')).toHaveText(/Prod ready/);
  await page.getByRole('link', { name: '← All challenges' }).click();
  await expect(page.getByTestId('challenge-card').filter({ hasText: CID }).getByText('✓ Completed')).toBeVisible();

  // Judge tab: the fake judge is scripted (a verdict for every trace, and the meta-judge's critique)
  await setScripts(request, [
    {
      model: 'arena-e2e-judge',
      pattern: 'rubric under review',
      reply: JSON.stringify({
        references_contract: true,
        missing_clauses: [],
        defines_evidence: false,
        vague_phrases: ['appropriate'],
        high_variance: true,
        critique: CRITIQUE,
      }),
    },
    {
      model: 'arena-e2e-judge',
      pattern: '',
      reply: JSON.stringify({ pass: false, severity: 'high', cluster: 'scripted fail', reason: 'Scripted.', evidence: [{ idx: 0, label: 'scripted', detail: 'scripted' }] }),
    },
  ]);
  try {
    await page.getByTestId('challenge-card').filter({ hasText: CID }).getByRole('link', { name: /^Start / }).click();
    await page.getByRole('tab', { name: 'LLM as judge (rubric)' }).click();
    await setEditor(page, 'Fail the trace when the agent refunds before verify_identity (clause 0); cite the message. Be appropriate.');
    await expect(page.getByLabel('Judge model')).toHaveValue(/\d+/);
    // the hidden set is judged only by the operator's approved judge (`assay up`: the demo's)
    await expect(page.getByLabel('Ship to Prod judge')).toHaveValue('fake:fake-judge');
    await expect(page.getByText("Your project's own models judge dev traces only")).toBeVisible();
    await expect(run).toBeEnabled();
    await run.click();
    await expect(page.getByTestId('critique')).toContainText(CRITIQUE);
    await expect(page.getByTestId('critique')).toContainText('does not define evidence');
    await expect(page.getByTestId('summary-dev').getByTestId('gate')).toHaveText(/Blocked/);
  } finally {
    await setScripts(request, []);
  }
});
