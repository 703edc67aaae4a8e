import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { registerAndSignIn } from './helpers';

// The side-by-side case viewer against the real stack: a demo run on the two fake models
// (each replies "<model> says: <the question's first words>"), and a trace dataset scored
// by a rules scorer whose evidence is highlighted in the trace.

async function createProject(page: Page, name: string): Promise<number> {
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  await dialog.getByLabel('Project name').fill(name);
  await dialog.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  return Number(/\/projects\/(\d+)$/.exec(page.url())![1]);
}

async function expectNoViolations(page: Page, name: string) {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const found = results.violations.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(found, `accessibility violations on ${name}`).toEqual([]);
}

/** A JSON call from the signed-in page, with the session cookie and the CSRF header. */
async function api<T>(page: Page, method: string, path: string, body?: unknown): Promise<{ status: number; data: T }> {
  return page.evaluate(
    async ({ method, path, body }) => {
      const csrf = document.cookie
        .split('; ')
        .find((c) => c.startsWith('assay_csrf='))
        ?.split('=')[1];
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      if (csrf && method !== 'GET') headers['X-CSRF-Token'] = decodeURIComponent(csrf);
      const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
      return { status: r.status, data: await r.json() };
    },
    { method, path, body },
  );
}

test('open a case of a multi-model run side by side, diff two outputs, move to the next case', async ({ page }) => {
  test.setTimeout(180_000);
  await registerAndSignIn(page, 'e2e-cases');
  await createProject(page, 'E2E side by side');

  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  const runUrl = new URL(page.url()).pathname;

  // From an output's details to the case side by side
  const outputs = page.getByRole('table', { name: 'Outputs' });
  await outputs.getByRole('button', { name: /^Details of case #\d+/ }).first().click();
  await page.getByRole('dialog').getByRole('link', { name: 'Compare every target on this case' }).click();
  await expect(page).toHaveURL(/\/runs\/\d+\/cases\/\d+$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Case 1 of 12' })).toBeVisible();
  const firstCaseUrl = page.url();

  // Both demo models' outputs, next to each other, with status, tokens, cost and latency
  const columns = page.getByTestId('side-by-side');
  await expect(columns.getByRole('region')).toHaveCount(2);
  const fast = columns.getByRole('region', { name: /Fake Fast/ });
  const smart = columns.getByRole('region', { name: /Fake Smart/ });
  await expect(fast.getByTestId('output-text')).toContainText('fake-fast says:');
  await expect(smart.getByTestId('output-text')).toContainText('fake-smart says:');
  await expect(fast.getByText('succeeded')).toBeVisible();
  await expect(fast.getByText(/\d+ in \/ \d+ out tokens/)).toBeVisible();
  const question = (await fast.getByTestId('output-text').textContent())!.replace('fake-fast says: ', '');

  // The diff of the two outputs: the model names differ (jsdiff splits words at the hyphen),
  // and Fake Smart adds a sentence of its own to the question it echoes
  const diff = page.getByTestId('diff-text');
  await expect(diff.locator('del')).toHaveText(['[removed: −fast]']);
  await expect(diff.locator('ins')).toHaveText(['[added: +smart]', /^\[added: \+In short, the answer turns on .+\]$/]);
  await expect(page.getByText(/1 word removed, \d+ words added from “Fake Fast.*” to “Fake Smart.*”/)).toBeVisible();
  await expectNoViolations(page, 'the side-by-side case page');
  // the other way round, by lines
  await page.getByLabel('From').selectOption({ index: 1 });
  await page.getByLabel('To').selectOption({ index: 0 });
  await page.getByText('By lines').click();
  await expect(diff.locator('del')).toContainText(`fake-smart says: ${question}`);
  await expect(diff.locator('ins')).toContainText(`fake-fast says: ${question}`);

  // Next case with the keyboard, then with the button, back with k
  await page.locator('body').click({ position: { x: 1, y: 1 } });
  await page.keyboard.press('j');
  await expect(page.getByRole('heading', { level: 1, name: 'Case 2 of 12' })).toBeVisible();
  expect(page.url()).not.toBe(firstCaseUrl);
  await expect(columns.getByRole('region', { name: /Fake Fast/ }).getByTestId('output-text')).not.toContainText(question);
  await page.getByRole('link', { name: 'Next case →' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Case 3 of 12' })).toBeVisible();
  await page.keyboard.press('k');
  await expect(page.getByRole('heading', { level: 1, name: 'Case 2 of 12' })).toBeVisible();
  await page.getByRole('link', { name: /Back to run/ }).click();
  await expect(page).toHaveURL(new RegExp(`${runUrl}$`));
});

const RULES = `rules:
  - id: refund_needs_lookup
    when: agent_says("refunded")
    require: tool_called("lookup_order")
    severity: high
  - id: no_promises
    when: agent_says("promise")
    action: fail
    severity: low
`;

test('a trace scored by a rules scorer shows its messages with the evidence highlighted', async ({ page }) => {
  test.setTimeout(120_000);
  await registerAndSignIn(page, 'e2e-cases');
  const projectId = await createProject(page, 'E2E traces');
  const base = `/api/projects/${projectId}`;
  const messages = [
    { role: 'system', content: 'You are a support agent for Acme.' },
    { role: 'user', content: 'Please refund order 7.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'search_kb', arguments: '{"q": "refund policy"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'Refunds within 30 days.' },
    { role: 'assistant', content: 'I promise your order is refunded.' },
  ];
  const dataset = await api<{ id: number }>(page, 'POST', `${base}/datasets`, {
    name: 'Support traces',
    kind: 'traces',
    cases: [{ trace: { messages } }],
  });
  expect(dataset.status).toBe(201);
  const scorer = await api<{ id: number }>(page, 'POST', `${base}/scorers`, { name: 'Support policy', kind: 'rules', params: { yaml: RULES } });
  expect(scorer.status).toBe(201);
  const run = await api<{ id: number }>(page, 'POST', `${base}/runs`, { dataset_id: dataset.data.id, targets: [], scorer_ids: [scorer.data.id], name: 'Trace check' });
  expect(run.status).toBe(202);
  // The recorded trace is the output; the scoring job scores it in the background.
  type Page_ = { items: Array<{ case_id: number; id: number }> };
  const cells = await api<Page_>(page, 'GET', `${base}/runs/${run.data.id}/outputs`);
  const caseId = cells.data.items[0]!.case_id;
  await expect
    .poll(async () => (await api<{ targets: Array<{ outputs: Array<{ scores: unknown[] }> }> }>(page, 'GET', `${base}/runs/${run.data.id}/cases/${caseId}`)).data.targets[0]?.outputs[0]?.scores.length ?? 0, {
      timeout: 60_000,
    })
    .toBe(1);

  await page.goto(`/projects/${projectId}/runs/${run.data.id}/cases/${caseId}`);
  await expect(page.getByRole('heading', { level: 1, name: 'Case 1 of 1' })).toBeVisible();
  const trace = page.getByRole('list', { name: 'Messages' });
  await expect(trace.getByTestId('role-badge')).toHaveText(['system', 'user', 'assistant', 'tool', 'assistant']);
  const call = trace.getByRole('list', { name: 'Tool calls' });
  await expect(call).toContainText('search_kb');
  await expect(call).toContainText('{"q": "refund policy"}');
  await expect(trace.getByRole('listitem', { name: 'Message 3, tool' })).toContainText('result of call call_1');

  const flagged = trace.getByRole('listitem', { name: 'Message 4, assistant, violation' });
  await expect(flagged).toHaveAttribute('data-evidence', 'bad');
  await expect(flagged).toContainText('Violation (high): refund_needs_lookup');
  await expect(flagged).toContainText('lookup_order was never called');
  await expect(flagged).toContainText('Warning (low): no_promises');
  await expect(flagged.locator('mark')).toHaveText(['promise', 'refunded']);
  await expect(trace.locator('[data-evidence]')).toHaveCount(1);
  await expectNoViolations(page, 'a trace case with evidence');

  // The score itself, with its verdict, next to the output
  await expect(page.getByTestId('side-by-side').getByText('Support policy')).toBeVisible();
  await expect(page.getByTestId('side-by-side').getByText('fail', { exact: true })).toBeVisible();

  // Keyboard: tab to the evidence list, jump to the message
  const jump = page.getByRole('navigation', { name: 'Evidence' }).getByRole('button', { name: /Jump to message 4: violation, refund_needs_lookup/ });
  await jump.focus();
  await page.keyboard.press('Enter');
  await expect(flagged).toBeFocused();
});
