import { expect, test, type Page } from '@playwright/test';
import { registerAndSignIn, setScripts } from './helpers';

// Scoring from the browser: scorers picked in the New run form (the judge's cost in the
// confirm step), scorers added to a finished run with live progress, and pairwise judging
// of the run's two models. Judges answer through the fake provider's scripts
// (playwright.config.ts: ASSAY_E2E_FAKE_URL): the rubric judge by its criterion's text,
// the pairwise judge preferring Fake Smart's reply in whichever order it is shown.
const CRITERION = 'The reply answers the question asked.';
const RUBRIC = {
  criteria: [
    { name: 'Answers', description: CRITERION, weight: 0.5, scale: '1-5' },
    { name: 'Clear', description: 'The reply is easy to follow.', weight: 0.5, scale: '1-5' },
  ],
};
const criterion = (score: number) => ({ score, rationale: `Scored ${score}.` });
const pick = (winner: string) => JSON.stringify({ winner, rationale: 'Fake Smart answers more fully.' });
const SCRIPTS = [
  { pattern: CRITERION, reply: JSON.stringify({ criteria: { Answers: criterion(4), Clear: criterion(5) }, summary: 'Good.', confidence: 0.8 }) },
  { pattern: 'fake-smart says[\\s\\S]*fake-fast says', reply: pick('1') },
  { pattern: 'fake-fast says[\\s\\S]*fake-smart says', reply: pick('2') },
];

/** A scorer of the project, through the API with the browser's session (and CSRF token). */
async function createScorer(page: Page, projectId: string, name: string, kind: string, params: unknown) {
  const csrf = (await page.context().cookies()).find((c) => c.name === 'assay_csrf')?.value ?? '';
  const reply = await page.request.post(`/api/projects/${projectId}/scorers`, {
    headers: { 'X-CSRF-Token': decodeURIComponent(csrf) },
    data: { name, kind, params },
  });
  expect(reply.status(), await reply.text()).toBe(201);
}

test.afterEach(async ({ request }) => {
  await setScripts(request, []); // the other specs get the fake's usual echo
});

test('scorers on a new run with the judge cost, scorers added to a finished run live, pairwise judging with ratings', async ({ page, request }) => {
  test.setTimeout(240_000);
  await setScripts(request, SCRIPTS);
  await registerAndSignIn(page, 'e2e-scoring');
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const newProject = page.getByRole('dialog', { name: 'New project' });
  await newProject.getByLabel('Project name').fill('E2E scoring');
  await newProject.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  const projectUrl = page.url();
  const projectId = projectUrl.split('/').pop()!;

  // The demo run brings the demo dataset (12 questions) and the two fake models.
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  const demoRunUrl = page.url();
  await createScorer(page, projectId, 'Says', 'contains', { value: 'says' });
  await createScorer(page, projectId, 'Answers well', 'llm_judge', { judges: ['Fake Fast'], rubric: RUBRIC });
  await createScorer(page, projectId, 'Which is better', 'pairwise_judge', { judges: ['Fake Fast'] });

  // A new run with the LLM judge picked: its cost is in the confirm step.
  await page.goto(`${projectUrl}/runs/new`);
  await page.getByLabel('Dataset').selectOption({ label: 'Demo questions (Questions, 12 cases)' });
  await page.getByLabel(/^Fake Fast/).check();
  const scorers = page.getByRole('list', { name: 'Scorers' });
  await expect(scorers.getByText('Which is better')).toHaveCount(0); // a pairwise judge scores no output
  await scorers.getByLabel(/Answers well/).check();
  await page.getByRole('button', { name: 'Review' }).click();
  const confirm = page.getByRole('dialog', { name: 'Start this run?' });
  await expect(confirm.getByTestId('estimate-judges')).toContainText('LLM judges');
  await expect(confirm.getByTestId('estimate-judges')).toContainText('12');
  await confirm.getByRole('button', { name: 'Start run' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 90_000 });
  await page.getByRole('link', { name: 'Results grid' }).click();
  await expect(page.locator('[data-cell="0:1"]')).toContainText('Answers well');

  // Scorers added to the finished demo run: the estimate, then the job's progress live.
  await page.goto(demoRunUrl);
  await page.getByRole('button', { name: 'Add scorers' }).click();
  const add = page.getByRole('dialog', { name: 'Add scorers to this run' });
  await add.getByLabel(/^Says/).check();
  await expect(add.getByTestId('attach-estimate')).toContainText('24 scores on 24 outputs');
  await expect(add.getByTestId('attach-budget')).toHaveText('Budget: run no cap, project no cap.');
  await add.getByRole('button', { name: 'Add and score' }).click();
  const scoring = page.getByRole('dialog', { name: 'Scoring the run' });
  await expect(scoring.getByTestId('scoring-progress')).toContainText('24 of 24 scores written · done', { timeout: 60_000 });
  await scoring.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('link', { name: 'Results grid' }).click();
  await expect(page.locator('[data-cell="0:2"]')).toContainText('Says');
  await expect(page.locator('[data-cell="0:1"]')).toContainText('Says');

  // Pairwise judging of the demo run's two models, with the Bradley-Terry ratings.
  await page.goto(demoRunUrl);
  await page.getByRole('button', { name: 'Compare two targets' }).click();
  const pairwise = page.getByRole('dialog', { name: 'Compare two targets' });
  await expect(pairwise.getByLabel('Pairwise judge')).toHaveValue(/\d+/);
  await pairwise.getByRole('button', { name: 'Start judging' }).click();
  await expect(page.getByTestId('pairwise-progress')).toContainText('12 of 12 judgements · done', { timeout: 60_000 });
  const ratings = page.getByRole('table', { name: 'Bradley–Terry ratings' });
  await expect(ratings.getByRole('row')).toHaveCount(3); // header + the two models
  await expect(ratings.getByRole('row').nth(1)).toContainText('Fake Smart'); // best first
  await expect(page.getByTestId('position-bias')).toContainText('0%');
});
