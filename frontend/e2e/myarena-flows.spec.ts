import { expect, test } from '@playwright/test';
import { addFakeModel, addFakeProvider, registerAndSignIn, setScripts } from './helpers';

// myarena-spec §9's flows chained the way a newcomer meets them, on the fake provider:
// model CRUD (add, edit, delete), generate an eval with one of the models, run that eval
// against two models, judge its questions with two judges and read the judges' results.
// (Viewing results, scoring by hand, leaderboard and cost reports: results.spec.ts and
// reports.spec.ts; the single flows in depth: providers-models, datasets, runs, judgments.)
const JUDGE_PROMPT = 'from an evaluation dataset';
const QUESTIONS = [
  { question: 'What is the capital of Peru?', answer: 'Lima' },
  { question: 'What is the capital of Kenya?', answer: 'Nairobi' },
  { question: 'What is the capital of Norway?', answer: 'Oslo' },
];

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

test('model CRUD, generate an eval with a model, run it against two models, judge it and read the judges', async ({ page, request }) => {
  test.setTimeout(240_000);
  await setScripts(request, [
    { model: 'fake-fast', pattern: JUDGE_PROMPT, reply: verdict(9, 3, 8, 'Fast judge: crisp.') },
    { model: 'fake-smart', pattern: JUDGE_PROMPT, reply: verdict(6, 5, 7, 'Smart judge: fine.') },
    { model: 'fake-fast', pattern: 'distinct .*evaluation', reply: JSON.stringify({ questions: QUESTIONS }) },
  ]);
  await registerAndSignIn(page, 'e2e-flows');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E flows');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  const tabs = page.getByRole('navigation', { name: 'Project sections' });

  // 1. Model CRUD: a provider, three models; edit one, delete it.
  await addFakeProvider(page);
  await addFakeModel(page, 'Flow fast', 'fake-fast');
  await addFakeModel(page, 'Flow smart', 'fake-smart');
  await addFakeModel(page, 'Scratch model', 'fake-fast');
  const models = page.getByRole('table', { name: 'Models' });
  await expect(models.getByRole('row')).toHaveCount(4);

  await page.getByRole('button', { name: 'Edit Scratch model' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit model' });
  await edit.getByLabel('Name', { exact: true }).fill('Scratch renamed');
  await edit.getByLabel('Output price ($ per 1M tokens)').fill('1.2');
  await edit.getByRole('button', { name: 'Save model' }).click();
  await expect(edit).toBeHidden();
  const renamed = models.getByRole('row').filter({ hasText: 'Scratch renamed' });
  await expect(renamed.getByText('$1.20')).toBeVisible();
  await expect(models.getByText('Scratch model', { exact: true })).toHaveCount(0);

  await page.getByRole('button', { name: 'Delete Scratch renamed' }).click();
  const del = page.getByRole('dialog', { name: 'Delete model' });
  await expect(del).toContainText('“Scratch renamed” will be removed for good.');
  await del.getByRole('button', { name: 'Delete model' }).click();
  await expect(del).toBeHidden();
  await expect(models.getByRole('row')).toHaveCount(3);
  await expect(renamed).toHaveCount(0);

  // 2. Generate an eval with Flow fast (the fake answers with three questions).
  await tabs.getByRole('link', { name: 'Datasets' }).click();
  await page.getByRole('button', { name: 'Generate questions' }).click();
  const gen = page.getByRole('dialog', { name: 'Generate questions' });
  await gen.getByLabel('Generator model').selectOption({ label: 'Flow fast (fake-fast)' });
  await gen.getByLabel('Topic').fill('World capitals');
  await gen.getByLabel(/^How many/).fill('3');
  await gen.getByRole('button', { name: 'Generate' }).click();
  await expect(gen.getByTestId('generation-summary')).toContainText(/Asked for 3, got 3\. Cost \$/, { timeout: 60_000 });
  const preview = gen.getByRole('list', { name: 'Preview' });
  await expect(preview.getByRole('checkbox')).toHaveCount(3);
  await expect(preview).toContainText('What is the capital of Kenya?');
  await gen.getByLabel('New dataset name').fill('Flow capitals');
  await gen.getByRole('button', { name: 'Add 3 to a new dataset' }).click();
  await expect(page).toHaveURL(/\/datasets\/\d+$/);
  const datasetUrl = page.url();
  await expect(page.getByRole('heading', { name: 'Flow capitals' })).toBeVisible();
  const cases = page.getByRole('table', { name: 'Cases' });
  await expect(cases.getByText('What is the capital of Norway?')).toBeVisible();

  // 3. Run the generated eval against both models.
  await tabs.getByRole('link', { name: 'Runs' }).click();
  await page.getByRole('link', { name: 'New run' }).first().click();
  await page.getByLabel('Run name (optional)').fill('Flow run');
  await page.getByLabel('Dataset').selectOption({ label: 'Flow capitals (Questions, 3 cases)' });
  const targets = page.getByRole('group', { name: 'Models' });
  await targets.getByLabel(/^Flow fast/).check();
  await targets.getByLabel(/^Flow smart/).check();
  await expect(page.getByTestId('calls-line')).toHaveText('2 targets × 3 cases × 1 repeat = 6 calls');
  await page.getByRole('button', { name: 'Review' }).click();
  const confirm = page.getByRole('dialog', { name: 'Start this run?' });
  await confirm.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/runs\/\d+$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Flow run' })).toBeVisible();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await expect(page.getByTestId('run-succeeded')).toHaveText('6');
  const summary = page.getByRole('table').filter({ hasText: 'Flow smart' }).first();
  await expect(summary).toContainText('Flow fast');

  // 4. Judge mode: both models judge the generated questions.
  await page.goto(datasetUrl);
  await page.getByRole('button', { name: 'Judge questions' }).click();
  const judge = page.getByRole('dialog', { name: 'Judge questions' });
  const judges = judge.getByRole('group', { name: 'Judge models' });
  await judges.getByLabel(/^Flow fast/).check();
  await judges.getByLabel(/^Flow smart/).check();
  await judge.getByLabel('Relevance').uncheck();
  await judge.getByLabel('Originality').uncheck();
  await judge.getByRole('button', { name: 'Start judging' }).click();

  // 5. The judges' results, side by side.
  await expect(page).toHaveURL(/\/projects\/\d+\/datasets\/\d+\/judgments\/\d+$/);
  await expect(page.getByTestId('judging-progress')).toHaveText('All 6 ratings are in.', { timeout: 60_000 });
  const table = page.getByRole('table', { name: 'Judgments' });
  await expect(table.getByRole('columnheader')).toHaveText(['#', 'Question', 'Flow fast', 'Flow smart']);
  await expect(table.getByRole('row')).toHaveCount(4);
  await expect(table).toContainText('What is the capital of Peru?');
  const first = table.getByRole('row').nth(1);
  await expect(first.getByRole('cell').nth(2).getByTestId('rating-clarity')).toHaveText('9');
  await expect(first.getByRole('cell').nth(3).getByTestId('rating-overall')).toHaveText('7');
  const means = page.getByRole('table', { name: 'Mean rating per judge' });
  await expect(means).toContainText('Flow smart');
});
