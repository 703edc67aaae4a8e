import { expect, test, type Page } from '@playwright/test';
import { addFakeModel, addFakeProvider, signUpWithProject } from './helpers';

// Issue 33 A.2 in the browser: a PDF handbook the test writes itself (not the demo's) is
// uploaded from New run → "Answer from documents", two fake models answer from it (one copies
// its context, one contradicts it), the grid shows the context each answer was given, and
// groundedness — judged against that context — is higher for the copier, on screen as in
// the database.
const HANDBOOK = [
  [
    'Returns',
    'Refunds are paid within 30 days of a return.',
    'Store credit never expires.',
    'A returned item must be unused and in its original box.',
    'Customers bring returns to any of our shops or send them by post.',
    'The shop checks each returned item before the refund is approved.',
  ],
  [
    'Warranty',
    'The warranty lasts two years and covers parts and labour.',
    'Batteries are covered for six months.',
    'A repair under warranty is free of charge.',
    'Damage caused by water or by a fall is excluded from the warranty.',
    'Claims need the receipt and the serial number of the device.',
  ],
  [
    'Shipping',
    'Orders ship from Rotterdam.',
    'Express delivery takes one working day within the Netherlands.',
    'Standard delivery within Europe takes three to five working days.',
    'Parcels above twenty kilograms are delivered by a freight carrier.',
    'Every parcel carries a tracking code sent by email.',
  ],
  [
    'Payment',
    'Invoices are payable within fourteen days.',
    'Cards, bank transfers and vouchers are accepted at checkout.',
    'Business customers may ask for monthly invoicing.',
    'Prices include value added tax for customers inside the European Union.',
    'A late payment is reminded twice before it goes to a collection agency.',
  ],
  [
    'Support',
    'The help desk answers on weekdays from nine to five.',
    'Chat replies arrive within ten minutes during opening hours.',
    'Technicians visit homes only for appliances heavier than forty kilograms.',
    'Manuals for every product can be downloaded from the support site.',
    'Feedback about the help desk is read by the service manager every week.',
  ],
];

/** A PDF of one page per section, each line a text line in Helvetica: what pypdf reads back. */
function handbookPdf(pages: string[][]): Buffer {
  const escape = (line: string) => line.replace(/[\\()]/g, (c) => `\\${c}`);
  const objects: string[] = [];
  const add = (body: string) => objects.push(body) + 2; // ids 1 and 2: catalog and page tree
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const kids = pages.map((lines) => {
    const text = `BT /F1 12 Tf 16 TL 72 720 Td ${lines.map((l) => `(${escape(l)}) Tj T*`).join(' ')} ET`;
    const contents = add(`<< /Length ${Buffer.byteLength(text)} >>\nstream\n${text}\nendstream`);
    return add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${contents} 0 R >>`);
  });
  const all = ['<< /Type /Catalog /Pages 2 0 R >>', `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`, ...objects];
  let pdf = '%PDF-1.4\n';
  const offsets = all.map((body, i) => {
    const at = Buffer.byteLength(pdf);
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return at;
  });
  const xref = Buffer.byteLength(pdf);
  pdf += `xref\n0 ${all.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${all.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}
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
  await page.getByLabel('Upload a PDF, Markdown or text file').setInputFiles({ name: 'handbook.pdf', mimeType: 'application/pdf', buffer: handbookPdf(HANDBOOK) });
  await expect(page.getByLabel(/^handbook\.pdf/)).toBeChecked();
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
  await expect(details.getByTestId('retrieved-chunk').first()).toContainText('handbook.pdf');
  await page.setViewportSize({ width: 390, height: 900 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
  await page.setViewportSize({ width: 1280, height: 720 });

  // Groundedness, judged against the retrieved chunks, is higher for the copier on every case.
  type Out = { id: number; case_id: number; case_number: number; label: string; retrieved: unknown[] };
  type Scored = { kind: string; value: number; criteria: Record<string, number>; details: { grounding_source?: string } };
  const outputs = (await api(page, 'GET', `${base}/runs/${runId}/outputs?page_size=50`)).items as Out[];
  expect(outputs).toHaveLength(6);
  const scores = new Map<number, Scored>();
  for (const o of outputs) {
    expect(o.retrieved.length).toBeGreaterThan(0);
    const detail = await api(page, 'GET', `${base}/runs/${runId}/outputs/${o.id}`);
    const score = (detail.scores as Scored[]).find((s) => s.kind === 'rag_metrics')!;
    expect(score.details.grounding_source).toBe('retrieved');
    scores.set(o.id, score);
  }
  const of = (label: string, caseNumber: number) => {
    const found = outputs.find((o) => o.label === label && o.case_number === caseNumber)!;
    return { output: found, score: scores.get(found.id)! };
  };
  for (const n of [1, 2, 3]) {
    expect(of('Copier', n).score.criteria.groundedness, `case #${n}`).toBeGreaterThan(of('Contradicter', n).score.criteria.groundedness);
    // Screen = database: each grid cell's chip and context count are the API's.
    for (const [col, label] of [[1, 'Copier'], [2, 'Contradicter']] as const) {
      const { output, score } = of(label, n);
      const cell = page.locator(`[data-cell="${n - 1}:${col}"]`);
      await expect(cell).toContainText(`RAG quality ${score.value.toFixed(2)}`);
      await expect(cell.getByTestId('cell-context')).toHaveText(`Context (${output.retrieved.length})`);
    }
  }

  // The case page: each answer's context, and its scores' numbers as the database has them.
  await page.locator('[data-cell="0:0"]').getByRole('link', { name: 'Side by side' }).click();
  await expect(page).toHaveURL(new RegExp(`/runs/${runId}/cases/${of('Copier', 1).output.case_id}$`));
  const columns = page.getByTestId('side-by-side');
  for (const label of ['Copier', 'Contradicter']) {
    const { output, score } = of(label, 1);
    const region = columns.getByRole('region', { name: label });
    const chunks = output.retrieved.length;
    await expect(region.getByTestId('retrieved-context')).toContainText(`Context (${chunks} ${chunks === 1 ? 'chunk' : 'chunks'})`);
    const list = region.getByRole('list', { name: 'Scores' });
    await expect(list.getByLabel(`score ${score.value.toFixed(2)}`)).toBeVisible();
    for (const [name, value] of Object.entries(score.criteria)) await expect(list).toContainText(`${name} ${value.toFixed(2)}`);
  }
});
