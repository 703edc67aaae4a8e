import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { apiError, modelConfig, page, project } from '@/test/providerFixtures';
import type { RunCreateBody, RunEstimate, RunProblem } from '../api';

const ts = '2024-01-01T00:00:00Z';
const datasets = [
  { id: 4, name: 'Support FAQ', description: null, kind: 'cases', split: null, case_count: 12, version: 2, archived_at: null, created_at: ts },
  { id: 5, name: 'Chats', description: null, kind: 'conversations', split: null, case_count: 3, version: 1, archived_at: null, created_at: ts },
];
const models = [
  modelConfig({ id: 5, name: 'Mini' }),
  modelConfig({ id: 6, name: 'Local', input_price_per_mtok_micros: null, output_price_per_mtok_micros: null, priced: false }),
];

function estimateFor(body: RunCreateBody, problems: RunProblem[] = []): RunEstimate {
  const per = body.targets.flatMap((t) => {
    const temps = t.grid?.temperature ?? [null];
    return temps.map((temp) => ({
      label: `${t.model_id === 5 ? 'Mini' : 'Local'}${temp !== null ? ` (temperature=${temp})` : ''}`,
      model_id: t.model_id,
      calls: 12 * (body.repeats ?? 1),
      input_tokens: 1000,
      output_tokens_low: 100,
      output_tokens_high: 4000,
      low_micros: t.model_id === 5 ? 10_000 : null,
      high_micros: t.model_id === 5 ? 30_000 : null,
      priced: t.model_id === 5,
    }));
  });
  const priced = per.filter((p) => p.priced);
  return {
    dataset_version_id: 8,
    cases: 12,
    repeats: body.repeats ?? 1,
    calls: per.reduce((s, p) => s + p.calls, 0),
    low_micros: priced.reduce((s, p) => s + (p.low_micros ?? 0), 0),
    high_micros: priced.reduce((s, p) => s + (p.high_micros ?? 0), 0),
    judge_calls: 0,
    judge_low_micros: 0,
    judge_high_micros: 0,
    complete: priced.length === per.length,
    unpriced_models: [...new Set(per.filter((p) => !p.priced).map((p) => p.model_id!))],
    per_target: per,
    assumptions: { low_output_share: 0.1, default_max_tokens: 4000, tokens_per_message: 4 },
    problems,
  };
}

const documents = [
  { id: 7, name: 'handbook.md', mime: 'text/markdown', size_bytes: 900, pages: null, characters: 880, chunks: 6, chunk_size: 200, chunk_overlap: 20, created_by: 1, created_at: ts },
  { id: 8, name: 'prices.pdf', mime: 'application/pdf', size_bytes: 9000, pages: 3, characters: 5000, chunks: 30, chunk_size: 200, chunk_overlap: 20, created_by: 1, created_at: ts },
];

function serve(
  opts: {
    problems?: RunProblem[];
    create?: (body: RunCreateBody) => Response;
    estimate?: (body: RunCreateBody) => Response | null;
    role?: string;
    documents?: typeof documents;
  } = {},
) {
  return mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    if (path === '/api/projects/3') return json(project(opts.role ?? 'editor'));
    if (path === '/api/projects/3/datasets') return json(page(datasets));
    if (path === '/api/projects/3/datasets/4/versions')
      return json(page([{ id: 82, number: 2, case_count: 12, created_at: ts }, { id: 81, number: 1, case_count: 10, created_at: ts }]));
    if (path === '/api/projects/3/models') return json(page(models));
    if (path === '/api/projects/3/prompts') return json(page([{ id: 2, name: 'Support answer', description: null, archived_at: null, latest: { id: 31, number: 2, note: 'shorter' } }]));
    if (path === '/api/projects/3/prompts/2/versions')
      return json(page([{ id: 30, number: 1, note: 'first' }, { id: 31, number: 2, note: 'shorter' }]));
    if (path === '/api/projects/3/documents') return json(page(opts.documents ?? documents));
    if (path === '/api/projects/3/runs/estimate') {
      const body = (await req.clone().json()) as RunCreateBody;
      return opts.estimate?.(body) ?? json(estimateFor(body, opts.problems));
    }
    if (path === '/api/projects/3/runs' && req.method === 'POST') {
      const body = (await req.clone().json()) as RunCreateBody;
      return opts.create ? opts.create(body) : json({ id: 11 }, 202);
    }
    if (path === '/api/projects/3/runs') return json({ items: [], total: 0, page: 1, page_size: 20 });
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}

const bodyOf = async (fetch: ReturnType<typeof mockFetch>, path: string) => {
  const req = requestsOf(fetch).filter((r) => r.method === 'POST' && new URL(r.url).pathname === path).pop();
  return req ? ((await req.clone().json()) as RunCreateBody) : null;
};

async function configure() {
  await userEvent.selectOptions(await screen.findByLabelText('Dataset'), '4');
  await userEvent.click(screen.getByLabelText(/^Mini/));
  await userEvent.click(screen.getByLabelText(/^Local/));
}

describe('NewRunPage', { timeout: 20_000 }, () => {
  it('is reached from the runs list, counts targets × cases × repeats live, with the temperature grid', async () => {
    serve();
    renderProject('/projects/3');
    await userEvent.click(await screen.findByRole('link', { name: 'New run' }));
    expect(await screen.findByRole('heading', { name: 'New run' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Runs' })).toHaveClass('border-indigo-600');
    const line = screen.getByTestId('calls-line');
    expect(line).toHaveTextContent('0 targets × 0 cases × 1 repeat = 0 calls');

    await configure();
    expect(line).toHaveTextContent('2 targets × 12 cases × 1 repeat = 24 calls');

    await userEvent.click(screen.getByRole('button', { name: 'Add temperature variation for Mini' }));
    await userEvent.type(screen.getByLabelText('Temperature values for Mini'), '0.2, 0.7, 1');
    expect(screen.getByTestId('combos-5')).toHaveTextContent('3 combinations');
    expect(line).toHaveTextContent('4 targets × 12 cases × 1 repeat = 48 calls');

    await userEvent.clear(screen.getByLabelText('Repeats'));
    await userEvent.type(screen.getByLabelText('Repeats'), '2');
    expect(line).toHaveTextContent('4 targets × 12 cases × 2 repeats = 96 calls');

    // an older version changes the case count
    await userEvent.selectOptions(screen.getByLabelText('Version'), '81');
    expect(line).toHaveTextContent('4 targets × 10 cases × 2 repeats = 80 calls');

    await userEvent.click(screen.getByRole('button', { name: 'Remove Local' }));
    expect(screen.getByLabelText(/^Local/)).not.toBeChecked();
    expect(line).toHaveTextContent('3 targets × 10 cases × 2 repeats = 60 calls');
  });

  it('reviews: the estimate gets the budget in micro-dollars, the confirm dialog shows costs per target and unpriced models, then starts', async () => {
    const fetch = serve();
    renderProject('/projects/3/runs/new');
    await configure();
    await userEvent.click(screen.getByRole('button', { name: 'Add temperature variation for Mini' }));
    await userEvent.type(screen.getByLabelText('Temperature values for Mini'), '0, 1');
    await userEvent.click(screen.getByRole('button', { name: /Parameters for Local/ }));
    await userEvent.type(screen.getByLabelText('Max tokens'), '256');
    await userEvent.type(screen.getByLabelText('Budget in dollars (optional)'), '0.29');
    await userEvent.clear(screen.getByLabelText('Alert at (% of the budget)'));
    await userEvent.type(screen.getByLabelText('Alert at (% of the budget)'), '85');
    await userEvent.selectOptions(screen.getAllByLabelText('Prompt (required)')[0], '2');
    // the prompt's newest version is chosen; an older one can be picked
    await screen.findByRole('option', { name: 'v1 – first' });
    expect(screen.getAllByLabelText('Prompt version')[0]).toHaveValue('31');
    await userEvent.selectOptions(screen.getAllByLabelText('Prompt version')[0], '30');
    await userEvent.selectOptions(screen.getAllByLabelText('Prompt version')[0], '31');
    await userEvent.click(screen.getByRole('button', { name: 'Review' }));

    const dialog = await screen.findByRole('dialog', { name: 'Start this run?' });
    expect(within(dialog).getByTestId('estimate-total')).toHaveTextContent('$0.02 – $0.06 + unpriced');
    const rows = within(within(dialog).getByRole('table', { name: 'Cost per target' })).getAllByRole('row');
    expect(rows.map((r) => r.textContent)).toEqual([
      'TargetCallsCost',
      'Mini (temperature=0)12$0.01 – $0.03',
      'Mini (temperature=1)12$0.01 – $0.03',
      'Local12unpriced',
    ]);
    expect(dialog).toHaveTextContent('Unpriced, so not in the total: Local.');
    expect(dialog).toHaveTextContent('Budget: $0.29.');

    const estimated = await bodyOf(fetch, '/api/projects/3/runs/estimate');
    expect(estimated).toMatchObject({
      dataset_id: 4,
      budget_micros: 290_000,
      alert_threshold: 0.85,
      repeats: 1,
      targets: [
        { model_id: 5, params: {}, grid: { temperature: [0, 1] }, prompt_version_id: 31 },
        { model_id: 6, params: { max_tokens: 256 } },
      ],
    });

    await userEvent.click(within(dialog).getByRole('button', { name: 'Start run' }));
    expect(await screen.findByText('Run page')).toBeInTheDocument();
    expect(await bodyOf(fetch, '/api/projects/3/runs')).toEqual(estimated);
  });

  it('lists every problem in the confirm step and keeps start disabled', async () => {
    serve({
      problems: [
        { code: 'needs_prompt', message: 'Mini needs a prompt version: the cases are template variables', model_id: 5 },
        { code: 'missing_variables', message: 'Some cases lack a variable of the prompt', variables: ['product'], case_ids: [3, 9] },
        { code: 'unpriced_with_budget', message: 'Local has no price, so a budget cannot hold', model_id: 6 },
      ],
    });
    renderProject('/projects/3/runs/new');
    await configure();
    await userEvent.type(screen.getByLabelText('Budget in dollars (optional)'), '5');
    await userEvent.click(screen.getByRole('button', { name: 'Review' }));
    const dialog = await screen.findByRole('dialog', { name: 'Start this run?' });
    const problems = within(dialog).getByTestId('run-problems');
    expect(within(problems).getAllByRole('listitem')).toHaveLength(3);
    expect(problems).toHaveTextContent('Mini needs a prompt version');
    expect(problems).toHaveTextContent('Some cases lack a variable of the prompt (variables: product) (cases #3, #9)');
    expect(problems).toHaveTextContent('Local has no price, so a budget cannot hold');
    expect(within(dialog).getByRole('button', { name: 'Start run' })).toBeDisabled();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Back to the form' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('shows the 422 RUN_NOT_READY reasons next to the form', async () => {
    const fetch = serve({
      create: () =>
        json(
          apiError(422, 'RUN_NOT_READY', 'The run cannot start', {
            reasons: [
              { code: 'credential_failing', message: 'The OpenAI credential failed its last test', model_id: 5 },
              { code: 'budget_spent', message: 'The project budget is spent' },
            ],
          }),
          422,
        ),
    });
    renderProject('/projects/3/runs/new');
    await configure();
    await userEvent.click(screen.getByRole('button', { name: 'Review' }));
    await userEvent.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Start run' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    const aside = screen.getByRole('complementary', { name: 'Run summary' });
    const problems = within(aside).getByTestId('run-problems');
    expect(problems).toHaveTextContent('The run cannot start');
    expect(problems).toHaveTextContent('The OpenAI credential failed its last test');
    expect(problems).toHaveTextContent('The project budget is spent');
    expect(screen.queryByText('Run page')).not.toBeInTheDocument();
    expect(requestsOf(fetch).filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/api/projects/3/runs')).toHaveLength(1);
  });

  it('checks the form before asking for an estimate, and focuses the first problem', async () => {
    const fetch = serve();
    renderProject('/projects/3/runs/new');
    await userEvent.selectOptions(await screen.findByLabelText('Dataset'), '5');
    expect(screen.getByLabelText('Max history pairs')).toHaveValue('10');
    await userEvent.type(screen.getByLabelText('Budget in dollars (optional)'), 'ten');
    await userEvent.click(screen.getByRole('button', { name: 'Review' }));
    expect(await screen.findByText('Add at least one model.')).toBeInTheDocument();
    expect(screen.getByText(/Enter an amount in dollars/)).toBeInTheDocument();
    await waitFor(() => expect(screen.getByLabelText('Budget in dollars (optional)')).toHaveFocus());
    expect(requestsOf(fetch).some((r) => r.url.endsWith('/estimate'))).toBe(false);
  });

  it('tells a viewer that editors start runs', async () => {
    serve({ role: 'viewer' });
    renderProject('/projects/3/runs/new');
    expect(await screen.findByText('Editors start runs')).toBeInTheDocument();
  });

  describe('Answer from documents', () => {
    it('sends rag with the chosen documents, top-k and the edited template; omits it when off', async () => {
      const fetch = serve();
      renderProject('/projects/3/runs/new');
      await configure();
      // off: no rag in the body
      await userEvent.click(screen.getByRole('button', { name: 'Review' }));
      await screen.findByRole('dialog', { name: 'Start this run?' });
      expect(await bodyOf(fetch, '/api/projects/3/runs/estimate')).not.toHaveProperty('rag');
      await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Back to the form' }));

      await userEvent.click(screen.getByLabelText(/Retrieve context from the project/));
      const template = screen.getByLabelText('Prompt template');
      // prefilled with the server's default, placeholders explained
      expect((template as HTMLTextAreaElement).value).toMatch(/^Answer the question using only the context below[\s\S]*\{\{context\}\}[\s\S]*\{\{question\}\}$/);
      expect(screen.getByText(/Placeholders \(both required\)/)).toHaveTextContent('{{question}}');
      await userEvent.click(await screen.findByLabelText(/^handbook\.md/));
      await userEvent.click(screen.getByLabelText(/^prices\.pdf/));
      await userEvent.clear(screen.getByLabelText('Chunks per question (top-k)'));
      await userEvent.type(screen.getByLabelText('Chunks per question (top-k)'), '2');
      await userEvent.clear(template);
      await userEvent.type(template, 'Context: {{{{context}} Q: {{{{question}}');
      await userEvent.click(screen.getByRole('button', { name: 'Review' }));
      const dialog = await screen.findByRole('dialog', { name: 'Start this run?' });
      const rag = { document_ids: [7, 8], top_k: 2, template: 'Context: {{context}} Q: {{question}}' };
      expect((await bodyOf(fetch, '/api/projects/3/runs/estimate'))?.rag).toEqual(rag);
      await userEvent.click(within(dialog).getByRole('button', { name: 'Start run' }));
      expect(await screen.findByText('Run page')).toBeInTheDocument();
      expect((await bodyOf(fetch, '/api/projects/3/runs'))?.rag).toEqual(rag);
    });

    it('checks top-k, the documents and the placeholders before asking the server', async () => {
      const fetch = serve();
      renderProject('/projects/3/runs/new');
      await configure();
      await userEvent.click(screen.getByLabelText(/Retrieve context from the project/));
      await userEvent.clear(screen.getByLabelText('Chunks per question (top-k)'));
      await userEvent.type(screen.getByLabelText('Chunks per question (top-k)'), '21');
      await userEvent.clear(screen.getByLabelText('Prompt template'));
      await userEvent.type(screen.getByLabelText('Prompt template'), 'Only {{{{question}}');
      await userEvent.click(screen.getByRole('button', { name: 'Review' }));
      expect(await screen.findByText('Choose at least one document.')).toBeInTheDocument();
      expect(screen.getByLabelText('Chunks per question (top-k)')).toHaveAccessibleDescription('A whole number from 1 to 20.');
      expect(screen.getByLabelText('Prompt template')).toHaveAccessibleDescription('The template must hold {{context}}.');
      expect(requestsOf(fetch).some((r) => r.url.endsWith('/estimate'))).toBe(false);
    });

    it("shows the API's 422 field errors under the fields they name", async () => {
      serve({
        estimate: (body) =>
          body.rag
            ? json(
                apiError(422, 'VALIDATION_ERROR', "Invalid 'Answer from documents' settings", {
                  json: { rag: { document_ids: ['Document 8 has no chunks (upload it again to split it)'], template: ['The template must hold {{question}}'] } },
                }),
                422,
              )
            : null,
      });
      renderProject('/projects/3/runs/new');
      await configure();
      await userEvent.click(screen.getByLabelText(/Retrieve context from the project/));
      await userEvent.click(await screen.findByLabelText(/^prices\.pdf/));
      await userEvent.click(screen.getByRole('button', { name: 'Review' }));
      const docError = await screen.findByText('Document 8 has no chunks (upload it again to split it)');
      expect(docError).toHaveAttribute('id', 'run-rag-documents-error');
      expect(screen.getByLabelText('Prompt template')).toHaveAccessibleDescription('The template must hold {{question}}');
      expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    });

    it('links to where documents are uploaded when the project has none', async () => {
      serve({ documents: [] });
      renderProject('/projects/3/runs/new');
      await configure();
      await userEvent.click(screen.getByLabelText(/Retrieve context from the project/));
      const empty = await screen.findByTestId('rag-no-documents');
      expect(within(empty).getByRole('link', { name: 'Go to datasets' })).toHaveAttribute('href', '/projects/3/datasets');
      expect(screen.getByLabelText('Upload a PDF, Markdown or text file')).toBeInTheDocument();
    });
  });
});
