import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { makeQueryClient } from '@/app/queryClient';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { modelConfig } from '@/test/providerFixtures';
import { dataset } from '@/features/datasets/testFixtures';
import { WizardPage } from './WizardPage';

const ts = '2026-11-25T10:00:00Z';
const GOAL = 'Answer customer questions about orders politely, accurately and briefly.';
const PROMPT = 'You are a support agent for an online shop. Answer the question below.\n\nQuestion: {{question}}';
const FULL = {
  objective: { goal: GOAL },
  rubric: {
    criteria: [
      { name: 'Helpfulness', description: 'Gives an actionable answer', weight: 0.6, scale: { min: 0, max: 5 } },
      { name: 'Tone', description: 'Polite and calm wording', weight: 0.4, scale: { min: 0, max: 5 } },
    ],
  },
  prompt: { template: PROMPT, system: null, few_shots: [], tools: [] },
  data: { dataset_version_id: 21, holdout_fraction: 0.3 },
  models: { targets: [{ model_id: 5, params: { temperature: 0.2, max_tokens: 512 }, grid: null }] },
  judges: { pointwise: [5], refiner: null, pairwise: false, pairwise_judge: null, safety: { pii: true, jailbreak: true, action: 'flag' } },
  stop: { max_iterations: 3, min_delta: 0.02, convergence_window: 2, budget_alert_threshold: 0.8, max_total_tokens: null, stop_if_no_suggestion: true, max_budget_micros: 5_000_000 },
};
const TEMPLATE = {
  slug: 'customer-support', name: 'Customer support', description: 'Support replies',
  objective: 'Write empathetic customer support replies that resolve the issue in one message.',
  rubric: [
    { name: 'Empathy', description: 'Acknowledges the customer feeling', weight: 0.5, scale: { min: 0, max: 5 } },
    { name: 'Resolution', description: 'Resolves the issue in one reply', weight: 0.5, scale: { min: 0, max: 5 } },
  ],
  prompt: { template: 'You are a kind support agent. Read the message and reply helpfully.\n\nMessage: {{message}}' },
  cases: [{ input: { message: 'My parcel is late' }, expected: null, tags: ['shipping'] }],
};
const FROM_TEMPLATE = {
  ...FULL,
  objective: { goal: TEMPLATE.objective },
  rubric: { criteria: TEMPLATE.rubric },
  prompt: { template: TEMPLATE.prompt.template, system: null, few_shots: [], tools: [] },
  data: { dataset_version_id: 31, holdout_fraction: 0.3 },
};
const estimate = (low: number, high: number) => ({
  low_micros: low, high_micros: high, iterations: { low: 2, high: 3 }, cases: 6, calls_per_iteration: 18, complete: true, unpriced_models: [], problems: {},
  per_iteration: { execution: { low_micros: 100_000, high_micros: 300_000 }, judging: { low_micros: 200_000, high_micros: 500_000 }, refinement: { low_micros: 10_000, high_micros: 20_000 } },
});
const experiment = (id: number, config: object, name: string, updated = ts) => ({
  id, name, description: null, status: 'draft', stop_reason: null, stop_detail: null, template: null, config_version: 0, iterations: 0, best_prompt_version_id: null, spent_micros: 0, budget_micros: null,
  created_at: ts, updated_at: updated, started_at: null, finished_at: null, config, problems: {}, frozen_at: null, dataset_version_id: null, prompt_id: null, seed_prompt_version_id: null,
  current_prompt_version_id: null, scorer_ids: [], refinement_cases: 0, holdout_cases: 0, split_seed: null, spend: {}, created_by: 1,
});
const version = (id: number, cases: number) => ({ id, dataset_id: 0, number: 1, case_count: cases, note: null, created_at: ts, created_by: null, parent_id: null });

type Server = { drafts: Record<number, object>; validate?: (step: string) => Response | undefined };

/** The project's API at the fetch boundary: drafts, PATCH auto-save, per-step validation, estimate, templates, datasets, models. */
function serve(server: Server) {
  let saves = 0;
  let edited = false; // a save changed the objective: the estimate answers with new figures
  return mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    const one = path.match(/^\/api\/projects\/3\/experiments\/(\d+)$/);
    if (one && req.method === 'GET') return json(experiment(Number(one[1]), server.drafts[Number(one[1])], 'Support answers'));
    if (one && req.method === 'PATCH') {
      const { name, ...config } = (await req.clone().json()) as { name?: string; objective?: { goal?: string } };
      saves += 1;
      const before = (server.drafts[Number(one[1])] as { objective?: { goal?: string } }).objective?.goal;
      edited ||= config.objective?.goal !== before;
      return json(experiment(Number(one[1]), config, name ?? 'Support answers', `2026-11-25T10:00:0${saves}Z`));
    }
    if (path.endsWith('/validate')) {
      const { steps } = (await req.clone().json()) as { steps: string[] };
      return server.validate?.(steps[0]) ?? json({ valid: true, problems: {} });
    }
    if (path.endsWith('/estimate')) return json(edited ? estimate(2_000_000, 8_500_000) : estimate(1_230_000, 4_560_000));
    if (path === '/api/projects/3/experiment-templates') return json([TEMPLATE]);
    if (path === '/api/projects/3/experiment-templates/customer-support/apply') return json(experiment(8, FROM_TEMPLATE, 'Customer support'), 201);
    if (path === '/api/projects/3/datasets') {
      return json({ items: [dataset({ id: 11, name: 'Orders', case_count: 10 }), dataset({ id: 12, name: 'Customer support samples', case_count: 6 })], total: 2, page: 1, page_size: 20 });
    }
    if (path === '/api/projects/3/datasets/11/versions') return json([version(21, 10)]);
    if (path === '/api/projects/3/datasets/12/versions') return json([version(31, 6)]);
    if (path === '/api/projects/3/models') return json({ items: [modelConfig({ id: 5, name: 'Fake mini' })], total: 1, page: 1, page_size: 100 });
    return json({ code: 'NOT_FOUND', status: 404, message: `Not found: ${path}`, errors: {} }, 404);
  });
}

function renderWizard(route: string) {
  const wizard = <WizardPage />;
  return render(
    <QueryClientProvider client={makeQueryClient({ retry: false })}>
      <MemoryRouter initialEntries={[route]}>
        <Routes>
          <Route path="/projects/:projectId/experiments/new" element={wizard} />
          <Route path="/projects/:projectId/experiments/:experimentId/edit" element={wizard} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const calls = (fetch: ReturnType<typeof mockFetch>, method: string, tail: string) => requestsOf(fetch).filter((r) => r.method === method && new URL(r.url).pathname.endsWith(tail));
const stepTitle = () => screen.getByRole('heading', { level: 3, name: /^Step \d of 7/ });
const continueButton = () => screen.getByRole('button', { name: /Continue →|Create experiment →/ });
const bodyOf = async (r: Request) => (await r.clone().json()) as Record<string, unknown>;

describe('WizardPage', () => {
  it('blocks Continue on an invalid step and shows the error on its field, asking the server nothing', async () => {
    const fetch = serve({ drafts: { 5: {} } });
    renderWizard('/projects/3/experiments/5/edit?step=0');
    const objective = await screen.findByLabelText('What are you trying to achieve with this prompt?');
    await userEvent.type(objective, 'Too short');
    await userEvent.click(continueButton());
    expect(stepTitle()).toHaveTextContent('Step 1 of 7: Objective');
    expect(objective).toHaveAttribute('aria-invalid', 'true');
    expect(objective).toHaveAccessibleDescription(expect.stringContaining('The objective must be at least 20 characters.'));
    expect(screen.getByText('Fix the highlighted fields to continue.')).toBeInTheDocument();
    expect(calls(fetch, 'POST', '/validate')).toHaveLength(0);

    await userEvent.type(objective, ' about late parcels, in a calm voice');
    expect(objective).not.toHaveAttribute('aria-invalid', 'true'); // editing the field clears its error
    await userEvent.click(continueButton());
    await waitFor(() => expect(stepTitle()).toHaveTextContent('Step 2 of 7: Rubric'));
    expect(await bodyOf(calls(fetch, 'POST', '/validate')[0])).toEqual({ steps: ['objective'] });

    // The rubric's two empty criteria: each field says what it needs.
    await userEvent.click(continueButton());
    expect(stepTitle()).toHaveTextContent('Step 2 of 7: Rubric');
    expect(screen.getByLabelText('Criterion 1 name')).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getAllByText('A name of 1–50 characters.')).toHaveLength(2);
    expect(screen.getAllByText('A description of 10–500 characters.')).toHaveLength(2);
    expect(screen.getByRole('button', { name: /^2\. Rubric\s*\(has errors\)$/ })).toBeInTheDocument();
    expect(calls(fetch, 'POST', '/validate')).toHaveLength(1);
  });

  it("shows the server's 422 for a step under its field and stays on the step", async () => {
    serve({
      drafts: { 5: FULL },
      validate: (step) => (step === 'data' ? json({ code: 'VALIDATION_ERROR', status: 422, message: 'Invalid data', errors: { json: { data: { dataset_version_id: ['That dataset version has no cases.'] } } } }, 422) : undefined),
    });
    renderWizard('/projects/3/experiments/5/edit?step=3');
    await screen.findByRole('heading', { name: 'Step 4 of 7: Test data' });
    await userEvent.click(continueButton());
    expect(await screen.findByText('That dataset version has no cases.')).toBeInTheDocument();
    expect(stepTitle()).toHaveTextContent('Step 4 of 7: Test data');
  });

  it('Back keeps what was typed on the earlier and the later step', async () => {
    serve({ drafts: { 5: {} } });
    renderWizard('/projects/3/experiments/5/edit?step=0');
    const typed = 'Write short, correct answers about order status for shoppers.';
    await userEvent.type(await screen.findByLabelText('What are you trying to achieve with this prompt?'), typed);
    await userEvent.clear(screen.getByLabelText('Experiment name'));
    await userEvent.type(screen.getByLabelText('Experiment name'), 'Order answers');
    await userEvent.click(continueButton());
    await screen.findByRole('heading', { name: 'Step 2 of 7: Rubric' });
    await userEvent.type(screen.getByLabelText('Criterion 1 name'), 'Accuracy');
    await userEvent.click(screen.getByRole('button', { name: '← Back' }));
    expect(stepTitle()).toHaveTextContent('Step 1 of 7: Objective');
    expect(screen.getByLabelText('What are you trying to achieve with this prompt?')).toHaveValue(typed);
    expect(screen.getByLabelText('Experiment name')).toHaveValue('Order answers');
    await userEvent.click(continueButton());
    await screen.findByRole('heading', { name: 'Step 2 of 7: Rubric' });
    expect(screen.getByLabelText('Criterion 1 name')).toHaveValue('Accuracy');
  });

  it('a template fills the objective, the rubric, the seed prompt and the sample cases', async () => {
    const fetch = serve({ drafts: { 8: FROM_TEMPLATE } });
    renderWizard('/projects/3/experiments/new');
    expect(screen.getByTestId('save-state')).toHaveTextContent('Not saved yet');
    await userEvent.click(await screen.findByRole('button', { name: 'Customer support' }));
    await waitFor(() => expect(screen.getByLabelText('What are you trying to achieve with this prompt?')).toHaveValue(TEMPLATE.objective));
    expect(calls(fetch, 'POST', '/experiment-templates/customer-support/apply')).toHaveLength(1);

    await userEvent.click(continueButton());
    await screen.findByRole('heading', { name: 'Step 2 of 7: Rubric' });
    expect(screen.getByLabelText('Criterion 1 name')).toHaveValue('Empathy');
    expect(screen.getByLabelText('Criterion 2 name')).toHaveValue('Resolution');
    expect(screen.getByTestId('weight-sum')).toHaveTextContent('Total weight: 1.00 ✓');

    await userEvent.click(continueButton());
    await screen.findByRole('heading', { name: 'Step 3 of 7: Seed prompt' });
    expect(screen.getByLabelText('Prompt')).toHaveValue(TEMPLATE.prompt.template);
    expect(screen.getByTestId('variables')).toHaveTextContent('{{message}}');

    await userEvent.click(continueButton());
    await screen.findByRole('heading', { name: 'Step 4 of 7: Test data' });
    // the template's sample cases: a dataset of their own, its version picked
    await waitFor(() => expect(screen.getByLabelText('Dataset')).toHaveDisplayValue('Customer support samples (6 cases)'));
    expect(await screen.findByLabelText('Version')).toHaveDisplayValue('v1 — 6 cases');
  });

  it('renders the running estimate, low and high, from the API and refreshes it after a save', async () => {
    serve({ drafts: { 5: FULL } });
    renderWizard('/projects/3/experiments/5/edit?step=0');
    const box = await screen.findByRole('region', { name: 'Cost estimate' });
    await waitFor(() => expect(within(box).getByTestId('estimate-range')).toHaveTextContent('$1.23 – $4.56'));
    expect(box).toHaveTextContent('2–3 iterations × 18 calls on 6 cases.');
    const per = within(box).getByRole('list', { name: 'Per iteration' });
    expect(per).toHaveTextContent('execution$0.10–$0.30');
    expect(per).toHaveTextContent('judging$0.20–$0.50');
    await userEvent.type(screen.getByLabelText('What are you trying to achieve with this prompt?'), ' Mention the order number.');
    await waitFor(() => expect(within(box).getByTestId('estimate-range')).toHaveTextContent('$2.00 – $8.50'), { timeout: 3000 });
  });

  it('auto-saves the draft after an edit, and Continue saves before asking the server to validate', async () => {
    const fetch = serve({ drafts: { 5: FULL } });
    renderWizard('/projects/3/experiments/5/edit?step=0');
    const objective = await screen.findByLabelText('What are you trying to achieve with this prompt?');
    await userEvent.clear(objective);
    await userEvent.type(objective, 'Reply to order questions with the status and the next step.');
    await waitFor(() => expect(screen.getByTestId('save-state')).toHaveTextContent('All changes saved'), { timeout: 3000 });
    const saved = calls(fetch, 'PATCH', '/experiments/5');
    expect(saved).toHaveLength(1); // debounced: one save for the whole edit
    const body = await bodyOf(saved[0]);
    expect(body.objective).toEqual({ goal: 'Reply to order questions with the status and the next step.' });
    expect(body.rubric).toEqual({ criteria: FULL.rubric.criteria });
    expect(body.data).toEqual({ dataset_version_id: 21, holdout_fraction: 0.3 });
    expect(body.stop).toMatchObject({ max_iterations: 3, max_budget_micros: 5_000_000 });

    await userEvent.type(objective, ' Be brief.');
    await userEvent.click(continueButton());
    await screen.findByRole('heading', { name: 'Step 2 of 7: Rubric' });
    const order = requestsOf(fetch).filter((r) => r.method !== 'GET').map((r) => `${r.method} ${new URL(r.url).pathname.split('/').pop()}`);
    expect(order.slice(-2)).toEqual(['PATCH 5', 'POST validate']);
    expect((await bodyOf(calls(fetch, 'PATCH', '/experiments/5')[1])).objective).toEqual({ goal: 'Reply to order questions with the status and the next step. Be brief.' });
  });

  it('a complete draft continues through all seven steps, each validated, to the confirmation', async () => {
    const fetch = serve({ drafts: { 5: FULL } });
    renderWizard('/projects/3/experiments/5/edit?step=0');
    await screen.findByRole('heading', { name: 'Step 1 of 7: Objective' });
    expect(within(screen.getByRole('navigation', { name: 'Wizard steps' })).getAllByRole('button')).toHaveLength(7);
    const titles = ['Rubric', 'Seed prompt', 'Test data', 'Models & parameters', 'Judges & safety', 'Stop rules & budget'];
    for (const [i, title] of titles.entries()) {
      await userEvent.click(continueButton());
      await screen.findByRole('heading', { name: `Step ${i + 2} of 7: ${title}` });
    }
    await userEvent.click(continueButton());
    const dialog = await screen.findByRole('dialog', { name: 'Create experiment?' });
    expect(dialog).toHaveTextContent('Estimated cost: $1.23 – $4.56');
    expect(dialog).toHaveTextContent('Up to 3 iterations, budget $5');
    const steps = await Promise.all(calls(fetch, 'POST', '/validate').map(bodyOf));
    expect(steps.map((b) => (b.steps as string[])[0])).toEqual(['objective', 'rubric', 'prompt', 'data', 'models', 'judges', 'stop']);
  });
});
