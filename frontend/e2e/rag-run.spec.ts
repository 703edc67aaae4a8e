import { expect, test, type Page } from '@playwright/test';
import { addFakeModel, addFakeProvider, signUpWithProject } from './helpers';

// Issue 33 A.2 in the browser: a Markdown handbook the test writes is uploaded from New run →
// "Answer from documents", two fake models answer from it (one copies its context, one
// contradicts it), the grid shows the context each answer was given, and groundedness —
// judged against that context — differs between them.
const HANDBOOK = `# Returns

Refunds are paid within 30 days of a return. Store credit never expires.

# Warranty

The warranty lasts two years and covers parts and labour. Batteries are covered for six months.

# Shipping

Orders ship from Rotterdam. Express delivery takes one working day within the Netherlands.
`;
const QUESTIONS = ['How long does the warranty last?', 'When are refunds paid?', 'Where do orders ship from?'];

/** The API with the browser's session and CSRF token. */
async function api<T = any>(page: Page, method: 'GET' | 'POST', path: string, data?: unknown): Promise<T> {
  const csrf = (await page.context().cookies()).find((c) => c.name === 'assay_csrf')?.value ?? '';
  const reply = await page.request.fetch(path, { method, data, headers: method === 'GET' ? {} : { 'X-CSRF-Token': decodeURIComponent(csrf) } });
  expect(reply.ok(), `${method} ${path}: ${reply.status()} ${await reply.text()}`).toBeTruthy();
  return (await reply.json()) as T;
}

test('a RAG run: upload a handbook, two models answer from it, the grid shows their context and groundedness differs', async ({ page }) => {
  test.setTimeout(180_000);
  const projectId = await signUpWithProject(page, 'e2e-rag-run', 'E2E RAG run');
  await addFakeProvider(page);
  await addFakeModel(page, 'Copier', 'fake-rag-copier');
  await addFakeModel(page, 'Contradicter', 'fake-rag-contradicter');
  await addFakeModel(page, 'Judge', 'fake-judge');
  const base = `/api/projects/${projectId}`;
  await api(page, 'POST', `${base}/datasets`, {
    name: 'Handbook questions',
    kind: 'questions',
    cases: QUESTIONS.map((q) => ({ input: { question: q }, expected: { answer: 'see the handbook' } })),
  });
  await api(page, 'POST', `${base}/scorers`, { name: 'RAG quality', kind: 'rag_metrics', params: { judges: ['Judge'] } });

  // New run → Answer from documents: the upload is chosen at once; the default template is shown.
  await page.goto(`/projects/${projectId}/runs/new`);
  await page.getByLabel('Dataset').selectOption({ label: 'Handbook questions (Questions, 3 cases)' });
  await page.getByLabel(/^Copier/).check();
  await page.getByLabel(/^Contradicter/).check();
  await page.getByRole('list', { name: 'Scorers' }).getByLabel(/RAG quality/).check();
  await page.getByLabel(/Retrieve context from the project/).check();
  await expect(page.getByTestId('rag-no-documents')).toBeVisible();
  await page.getByLabel('Upload a PDF, Markdown or text file').setInputFiles({ name: 'handbook.md', mimeType: 'text/markdown', buffer: Buffer.from(HANDBOOK) });
  await expect(page.getByLabel(/^handbook\.md/)).toBeChecked();
  await expect(page.getByLabel('Prompt template')).toHaveValue(/\{\{context\}\}[\s\S]*\{\{question\}\}/);
  await page.getByLabel('Chunks per question (top-k)').fill('2');

  // The template is checked before the server is asked, and the error sits under the field.
  await page.getByLabel('Prompt template').fill('Only {{question}}');
  await page.getByRole('button', { name: 'Review' }).click();
  await expect(page.getByLabel('Prompt template')).toHaveAccessibleDescription('The template must hold {{context}}.');
  await page.getByLabel('Prompt template').fill('Use the context.\n\nContext:\n{{context}}\n\nQuestion: {{question}}');

  // No sideways scroll at 390 px with the section open.
  await page.setViewportSize({ width: 390, height: 900 });
  expect(await page.evaluate(() => document.getElementById('main')!.scrollWidth - document.getElementById('main')!.clientWidth)).toBeLessThanOrEqual(0);
  await page.setViewportSize({ width: 1280, height: 720 });

  await page.getByRole('button', { name: 'Review' }).click();
  await page.getByRole('dialog', { name: 'Start this run?' }).getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/\d+$/);
  const runId = page.url().split('/').pop()!;
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 120_000 });
  const run = await api(page, 'GET', `${base}/runs/${runId}`);
  expect(run.settings.rag).toMatchObject({ top_k: 2, template: expect.stringContaining('Use the context.') });

  // Results grid: each cell says how many chunks it was given; the focused cell lists them.
  await page.getByRole('link', { name: 'Results grid' }).click();
  for (const col of [1, 2]) await expect(page.locator(`[data-cell="0:${col}"]`).getByTestId('cell-context')).toHaveText(/^Context \([12]\)$/);
  await page.locator('[data-cell="0:1"]').focus();
  const details = page.getByTestId('grid-active-details');
  await details.getByText(/^Context \(\d chunks?\)/).click();
  await expect(details.getByTestId('retrieved-chunk').first()).toContainText('handbook.md');
  await page.setViewportSize({ width: 390, height: 900 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
  await page.setViewportSize({ width: 1280, height: 720 });

  // Groundedness, judged against the retrieved chunks, differs between the two models.
  const outputs = (await api(page, 'GET', `${base}/runs/${runId}/outputs?page_size=50`)).items as { id: number; model_id: number; retrieved: unknown[] }[];
  expect(outputs).toHaveLength(6);
  const models = (await api(page, 'GET', `${base}/models`)).items as { id: number; name: string }[];
  const byName = new Map(models.map((m) => [m.id, m.name]));
  const grounded: Record<string, number[]> = {};
  for (const o of outputs) {
    expect(o.retrieved.length).toBeGreaterThan(0);
    const detail = await api(page, 'GET', `${base}/runs/${runId}/outputs/${o.id}`);
    const score = detail.scores.find((s: { kind: string }) => s.kind === 'rag_metrics');
    expect(score.details.grounding_source).toBe('retrieved');
    (grounded[byName.get(o.model_id)!] ??= []).push(score.criteria.groundedness);
  }
  expect(Math.min(...grounded.Copier)).toBeGreaterThan(Math.max(...grounded.Contradicter));

  // The case page: each answer's context, and the groundedness line of each column differs.
  await page.locator('[data-cell="0:0"]').getByRole('link').first().click();
  const columns = page.getByTestId('side-by-side');
  const copier = columns.getByRole('region', { name: 'Copier' });
  const contradicter = columns.getByRole('region', { name: 'Contradicter' });
  await expect(copier.getByTestId('retrieved-context')).toContainText(/Context \(\d chunks?\)/);
  await expect(contradicter.getByTestId('retrieved-context')).toContainText(/Context \(\d chunks?\)/);
  const line = async (region: typeof copier) => (await region.getByRole('list', { name: 'Scores' }).textContent())!.match(/groundedness [^·]+/)?.[0];
  expect(await line(copier)).toBeTruthy();
  expect(await line(copier)).not.toBe(await line(contradicter));
});
