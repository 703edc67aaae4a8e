import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test, type Page } from '@playwright/test';
import { addFakeModel, addFakeProvider, signUpWithProject } from './helpers';

// The RAG flow in the browser alone, on the shipped fake provider (its generator and judges
// answer with valid, content-sensitive JSON; nothing is scripted): a PDF becomes grounded
// conversations, a RAG metrics scorer judges three models' answers, and the RAG report's
// numbers equal the API's.
const PDF = readFileSync(fileURLToPath(new URL('../../seeds/acme-cloud-faq.pdf', import.meta.url)));
const MODELS = [
  ['Fake Fast', 'fake-fast'],
  ['Fake Smart', 'fake-smart'],
  ['Fake Mini', 'fake-mini'],
] as const;
const SHOTS = process.env.RAG_SHOTS; // a folder: screenshots of the key screens at 1400 and 390 px

/** The screen fits a phone's width (main does not scroll sideways); with RAG_SHOTS, screenshots at 1400 and 390 px. */
async function checkScreen(page: Page, name: string) {
  const settle = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  for (const width of [1400, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await settle();
    if (width === 390) {
      const overflow = await page.evaluate(() => document.getElementById('main')!.scrollWidth - document.getElementById('main')!.clientWidth);
      expect(overflow, `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(0);
    }
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 720 });
}

const registerWithProject = (page: Page, name: string) => signUpWithProject(page, 'e2e-rag', name);

async function addFakeProviderAndModels(page: Page) {
  await addFakeProvider(page);
  for (const [name, id] of MODELS) await addFakeModel(page, name, id);
}

async function getJson<T = any>(page: Page, path: string): Promise<T> {
  const res = await page.request.get(path);
  expect(res.ok(), `GET ${path}: ${res.status()} ${await res.text()}`).toBeTruthy();
  return (await res.json()) as T;
}

const num = (v: number) => v.toFixed(2);

test('RAG flow: a PDF becomes scored conversations over three models, and the RAG report matches the API', async ({ page }) => {
  test.setTimeout(120_000);
  const projectId = await registerWithProject(page, 'E2E RAG');
  await addFakeProviderAndModels(page);
  const tabs = page.getByRole('navigation', { name: 'Project sections' });

  // Datasets → Generate conversations from the uploaded PDF, accepted into a new dataset.
  await tabs.getByRole('link', { name: 'Datasets' }).click();
  await page.getByRole('button', { name: 'Generate conversations' }).click();
  const gen = page.getByRole('dialog', { name: 'Generate conversations' });
  await gen.getByLabel('Generator model').selectOption({ label: 'Fake Smart (fake-smart)' });
  await gen.getByLabel('Or upload a PDF or text file').setInputFiles({ name: 'acme-cloud-faq.pdf', mimeType: 'application/pdf', buffer: PDF });
  await expect(gen.getByLabel('Document').locator('option:checked')).toHaveText(/acme-cloud-faq\.pdf/);
  await gen.getByLabel('Turns per conversation (1–10)').fill('2');
  await gen.getByLabel(/^How many/).fill('3');
  await gen.getByRole('button', { name: 'Estimate cost' }).click();
  await expect(gen.getByTestId('generation-estimate')).toContainText('Estimated cost');
  await checkScreen(page, '1-generate');
  await gen.getByRole('button', { name: 'Generate' }).click();
  await expect(gen.getByTestId('generation-summary')).toContainText(/Asked for 3, got 3\. Cost \$/, { timeout: 60_000 });
  await expect(gen.getByRole('list', { name: 'Preview' }).getByRole('checkbox')).toHaveCount(3);
  await checkScreen(page, '2-preview');
  await gen.getByLabel('New dataset name').fill('Acme FAQ conversations');
  await gen.getByRole('button', { name: 'Add 3 to a new dataset' }).click();
  await expect(page).toHaveURL(/\/datasets\/\d+$/);
  await expect(page.getByRole('heading', { name: 'Acme FAQ conversations' })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Cases' }).getByRole('row')).toHaveCount(4); // header + 3
  await checkScreen(page, '3-dataset');

  // Scorers → a RAG metrics scorer judged by Fake Smart, made in the UI.
  await tabs.getByRole('link', { name: 'Scorers' }).click();
  await page.getByRole('link', { name: 'New scorer' }).first().click();
  await page.getByLabel('Name', { exact: true }).fill('RAG quality');
  await page.getByLabel('Kind', { exact: true }).selectOption('rag_metrics');
  await page.getByRole('group', { name: 'Judge models' }).getByLabel(/^Fake Smart/).check();
  await checkScreen(page, '4-scorer');
  await page.getByRole('button', { name: 'Create scorer' }).click();
  await expect(page.getByRole('table', { name: 'Scorers' }).getByRole('link', { name: 'RAG quality', exact: true })).toBeVisible();

  // New run over the conversations and the three models, with the scorer picked.
  await page.goto(`/projects/${projectId}/runs/new`);
  await page.getByLabel('Dataset').selectOption({ label: 'Acme FAQ conversations (Conversations, 3 cases)' });
  for (const [name] of MODELS) await page.getByLabel(new RegExp(`^${name}`)).check();
  await page.getByRole('list', { name: 'Scorers' }).getByLabel(/RAG quality/).check();
  await checkScreen(page, '5-new-run');
  await page.getByRole('button', { name: 'Review' }).click();
  const confirm = page.getByRole('dialog', { name: 'Start this run?' });
  await expect(confirm.getByTestId('estimate-judges')).toContainText('LLM judges');
  await confirm.getByRole('button', { name: 'Start run' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await checkScreen(page, '6-run');

  // Results: every conversation's cells are scored and name the turn they answer.
  await page.getByRole('link', { name: 'Results grid' }).click();
  for (const col of [1, 2, 3]) {
    const cell = page.locator(`[data-cell="0:${col}"]`);
    await expect(cell.getByTestId('cell-turn').first()).toContainText(/^Turn \d of 2: /);
    await expect(cell).toContainText('RAG quality');
  }
  await checkScreen(page, '7-results');

  // Reports → RAG metrics: one row per model, each number as the API has it.
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'E2E RAG' }).click();
  await tabs.getByRole('link', { name: 'Reports' }).click();
  await page.getByRole('navigation', { name: 'Reports' }).getByRole('link', { name: 'RAG metrics' }).click();
  const rag = await getJson(page, `/api/projects/${projectId}/reports/rag`);
  expect(rag.scorer.name).toBe('RAG quality');
  expect(rag.items).toHaveLength(3);
  // The models differ in quality on the fake provider: best first, Fake Smart ahead of Fake Mini.
  expect(rag.items.map((m: { model_name: string }) => m.model_name)).toEqual(['Fake Smart', 'Fake Fast', 'Fake Mini']);
  const figure = page.getByRole('region', { name: 'RAG metrics by model' });
  await figure.getByRole('button', { name: 'Show as table' }).click();
  await checkScreen(page, '8-rag-report');
  const table = figure.getByRole('table', { name: 'RAG metrics by model' });
  await expect(table.getByRole('row')).toHaveCount(4);
  for (const [i, m] of rag.items.entries() as IterableIterator<[number, any]>) {
    expect(m.average.mean, `${m.model_name} has an average`).not.toBeNull();
    expect(m.success_rate.k).toBeGreaterThan(0);
    const row = table.getByRole('row').nth(i + 1);
    await expect(row.getByRole('rowheader')).toHaveText(m.model_name);
    for (const metric of m.metrics) expect(metric.mean).not.toBeNull();
    await expect(row).toContainText(`${num(m.average.mean)} `);
    for (const metric of m.metrics) await expect(row).toContainText(num(metric.mean));
    await expect(row).toContainText(`${m.success_rate.k} of ${m.success_rate.n}`);
    await expect(row.getByRole('cell').last()).toHaveText(String(m.outputs));
  }
});
