import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { FakeEventSource } from '@/test/fakeEventSource';
import { modelConfig } from '@/test/providerFixtures';
import { apiError, project } from '@/features/datasets/testFixtures';
import type { GenerationJob } from '../api';

const gen = '/api/projects/3/generation';
const ts = '2024-01-01T00:00:00Z';

function job(over: Partial<GenerationJob> = {}): GenerationJob {
  return {
    id: 5, kind: 'questions', status: 'queued', model_id: 5, requested: 10, received: 0, batches: 2, batches_done: 0, cost_micros: 0, tokens_in: 0, tokens_out: 0,
    estimate: { calls: 2, low_micros: 100, high_micros: 300, priced: true }, error: null, dataset_ids: [], created_at: ts, finished_at: null, spec: {}, items: [], warnings: [], ...over,
  };
}

const done = job({
  status: 'succeeded', batches_done: 2, received: 3, cost_micros: 1234, tokens_in: 900, tokens_out: 400,
  items: [{ question: 'What is 2+2?', answer: '4' }, { question: 'Capital of Peru?', answer: 'Lima' }, { question: 'Largest ocean?', answer: 'Pacific' }],
  warnings: ['Asked for 10, got 3.'],
});

function serve(extra: (req: Request, path: string) => Response | Promise<Response> | undefined = () => undefined) {
  let state: GenerationJob = job();
  const fetch = mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    const hit = await extra(req, path);
    if (hit) return hit;
    if (path === '/api/projects/3') return json(project('editor'));
    if (path === '/api/projects/3/datasets') return json({ items: [], total: 0, page: 1, page_size: 20 });
    if (path === '/api/projects/3/models') return json({ items: [modelConfig()], total: 1, page: 1, page_size: 100 });
    if (path === `${gen}/questions/estimate`) return json({ model_id: 5, calls: 2, input_tokens: 500, output_tokens_low: 100, output_tokens_high: 4000, low_micros: 150, high_micros: 2400, priced: true, warnings: [] });
    if (path === `${gen}/questions`) return json(state, 202);
    if (path === `${gen}/5`) return json(state);
    if (path === `${gen}/5/accept`) return json({ dataset_id: 44, name: 'Trivia', kind: 'questions', cases: 2 }, 201);
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
  return { fetch, finish: () => (state = done) };
}

beforeEach(() => {
  FakeEventSource.instances = [];
  vi.stubGlobal('EventSource', FakeEventSource);
});

describe('GenerateDialog', () => {
  it('checks the form, estimates, follows the live progress, previews with select/deselect, and accepts into a new dataset', async () => {
    const { fetch, finish } = serve();
    const { router } = renderProject('/projects/3/datasets');
    await userEvent.click(await screen.findByRole('button', { name: 'Generate questions' }));
    const dialog = screen.getByRole('dialog', { name: 'Generate questions' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Generate' }));
    expect(within(dialog).getByText('Choose a generator model.')).toBeInTheDocument();
    expect(within(dialog).getByText('Enter a topic.')).toBeInTheDocument();

    await userEvent.selectOptions(within(dialog).getByLabelText('Generator model'), await within(dialog).findByRole('option', { name: 'Mini (gpt-4o-mini)' }));
    await userEvent.type(within(dialog).getByLabelText('Topic'), 'Trivia');
    await userEvent.type(within(dialog).getByLabelText('Question types'), 'logic, geo');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Estimate cost' }));
    expect(await within(dialog).findByTestId('generation-estimate')).toHaveTextContent('2 calls');

    await userEvent.click(within(dialog).getByRole('button', { name: 'Generate' }));
    const post = requestsOf(fetch).find((r) => r.method === 'POST' && new URL(r.url).pathname === `${gen}/questions`)!;
    expect(await post.json()).toEqual({ model_id: 5, count: 10, topic: 'Trivia', instructions: null, type_tags: ['logic', 'geo'], difficulty: null, max_cost_micros: null });

    expect(await within(dialog).findByTestId('generation-progress')).toHaveTextContent('Queued');
    await waitFor(() => expect(FakeEventSource.instances).toHaveLength(1));
    const es = FakeEventSource.instances[0];
    expect(es.url).toBe(`${gen}/5/events`);
    act(() => {
      es.open();
      es.emit('generation.progress', { type: 'generation.progress', job_id: 5, status: 'running', batches: 2, batches_done: 1, requested: 10, received: 2, cost_micros: 600 });
    });
    expect(within(dialog).getByTestId('generation-progress')).toHaveTextContent('Batch 1 of 2 · received 2 of 10');
    expect(within(dialog).getByRole('progressbar', { name: 'Generation progress' })).toHaveAttribute('aria-valuenow', '50');
    finish();
    act(() => es.emit('generation.finished', { type: 'generation.finished', job_id: 5, status: 'succeeded', batches: 2, batches_done: 2, requested: 10, received: 3, cost_micros: 1234 }));
    expect(es.closed).toBe(true);

    expect(await within(dialog).findByTestId('generation-summary')).toHaveTextContent('Asked for 10, got 3. Cost $0.0012');
    expect(within(dialog).getByTestId('generation-warnings')).toHaveTextContent('Asked for 10, got 3.');
    const preview = within(dialog).getByRole('list', { name: 'Preview' });
    expect(within(preview).getAllByRole('checkbox')).toHaveLength(3);
    expect(within(dialog).getByText('3 of 3 selected')).toBeInTheDocument();
    await userEvent.click(within(preview).getByRole('checkbox', { name: /Capital of Peru/ }));
    expect(within(dialog).getByText('2 of 3 selected')).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Select none' }));
    expect(within(dialog).getByRole('button', { name: 'Add 0 to a new dataset' })).toBeDisabled();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Select all' }));
    await userEvent.click(within(preview).getByRole('checkbox', { name: /Capital of Peru/ }));
    expect(within(dialog).getByLabelText('New dataset name')).toHaveValue('Trivia');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add 2 to a new dataset' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/projects/3/datasets/44'));
    const acc = requestsOf(fetch).find((r) => new URL(r.url).pathname === `${gen}/5/accept`)!;
    expect(await acc.json()).toEqual({ dataset_name: 'Trivia', selected: [0, 2] });
  });

  it('lists recent jobs and reopens one at its preview', async () => {
    const { finish } = serve((_req, path) =>
      path === gen ? json({ items: [{ ...done, spec: undefined, items: undefined, warnings: undefined }, job({ id: 6, kind: 'cases', status: 'succeeded', dataset_ids: [44] })], total: 2, page: 1, page_size: 10 }) : undefined,
    );
    finish();
    renderProject('/projects/3/datasets');
    const table = await screen.findByRole('table', { name: 'Generation jobs' });
    const rows = within(table).getAllByRole('row');
    expect(rows[1]).toHaveTextContent('questionssucceeded3 of 10$0.0012');
    expect(within(rows[2]).getByRole('link', { name: 'Dataset #44' })).toHaveAttribute('href', '/projects/3/datasets/44');
    await userEvent.click(within(rows[1]).getByRole('button', { name: 'Open generation job 5' }));
    const dialog = screen.getByRole('dialog', { name: 'Generate questions' });
    expect(await within(dialog).findByTestId('generation-summary')).toHaveTextContent('Asked for 10, got 3.');
    expect(within(dialog).getAllByRole('checkbox')).toHaveLength(3);
  });

  it('shows a partial job as partial with its reason, in the list and in the dialog', async () => {
    const partial = job({
      ...done, status: 'partial', error: '3 of 10 questions: 2 item(s) without a question dropped',
      warnings: ['2 item(s) without a question dropped', 'asked for 10 questions, got 3'],
    });
    const failed = job({ id: 6, status: 'failed', received: 0, finished_at: ts, error: '0 of 10 questions: no list found in the reply' });
    serve((_req, path) => {
      if (path === gen) return json({ items: [partial, failed], total: 2, page: 1, page_size: 10 });
      if (path === `${gen}/5`) return json(partial);
      return undefined;
    });
    renderProject('/projects/3/datasets');
    const table = await screen.findByRole('table', { name: 'Generation jobs' });
    const rows = within(table).getAllByRole('row');
    expect(rows[1]).toHaveTextContent('questionspartial3 of 10 questions: 2 item(s) without a question dropped3 of 10');
    expect(within(rows[1]).getByText('partial')).not.toHaveTextContent('succeeded');
    expect(rows[2]).toHaveTextContent('failed0 of 10 questions: no list found in the reply0 of 10');
    expect(within(rows[2]).getByRole('button', { name: 'Open generation job 6' })).toHaveTextContent('Open');
    await userEvent.click(within(rows[1]).getByRole('button', { name: 'Open generation job 5' }));
    const dialog = screen.getByRole('dialog', { name: 'Generate questions' });
    expect(await within(dialog).findByTestId('generation-partial')).toHaveTextContent('Partial: 3 of 10 questions: 2 item(s) without a question dropped');
    expect(within(dialog).getByTestId('generation-summary')).toHaveTextContent('Asked for 10, got 3.');
    expect(within(dialog).getByRole('button', { name: 'Add 3 to a new dataset' })).toBeEnabled();
  });

  it('shows the server’s field errors and a failed job', async () => {
    let attempt = 0;
    serve((req, path) => {
      if (path === `${gen}/cases` && req.method === 'POST') {
        attempt += 1;
        if (attempt === 1) return json(apiError(422, 'VALIDATION_ERROR', 'Invalid', { json: { count: ['Must be between 10 and 500.'] } }), 422);
        return json(job({ kind: 'cases', status: 'failed', error: 'The budget would be exceeded.' }), 202);
      }
      if (path === `${gen}/5`) return json(job({ kind: 'cases', status: 'failed', error: 'The budget would be exceeded.' }));
      return undefined;
    });
    renderProject('/projects/3/datasets');
    await userEvent.click(await screen.findByRole('button', { name: 'Generate cases' }));
    const dialog = screen.getByRole('dialog', { name: 'Generate synthetic cases' });
    await userEvent.selectOptions(within(dialog).getByLabelText('Generator model'), await within(dialog).findByRole('option', { name: 'Mini (gpt-4o-mini)' }));
    await userEvent.type(within(dialog).getByLabelText('Variables'), '2city');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Generate' }));
    expect(within(dialog).getByText('Variable names: letters, digits and _, not first a digit.')).toBeInTheDocument();
    await userEvent.clear(within(dialog).getByLabelText('Variables'));
    await userEvent.type(within(dialog).getByLabelText('Variables'), 'city, question');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Generate' }));
    expect(await within(dialog).findByText('Must be between 10 and 500.')).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Generate' }));
    expect(await within(dialog).findByText('Generation failed: The budget would be exceeded.')).toBeInTheDocument();
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('uploads a document for grounded conversations and uses it', async () => {
    let uploaded = false;
    let failUpload = false;
    const { fetch } = serve((req, path) => {
      if (path === '/api/projects/3/documents' && req.method === 'GET') return json({ items: [{ id: 1, name: 'old.pdf', pages: 3 }, ...(uploaded ? [{ id: 2, name: 'handbook.txt', pages: null }] : [])], total: 1, page: 1, page_size: 100 });
      if (path === '/api/projects/3/documents' && req.method === 'POST' && failUpload)
        return json(apiError(422, 'VALIDATION_ERROR', 'Invalid input', { files: { file: ['The PDF has no text layer (a scan?)'] } }), 422);
      if (path === '/api/projects/3/documents' && req.method === 'POST') return (uploaded = true), json({ id: 2, name: 'handbook.txt', pages: null }, 201);
      if (path === `${gen}/conversations`) return json(job({ kind: 'conversations' }), 202);
      return undefined;
    });
    renderProject('/projects/3/datasets');
    await userEvent.click(await screen.findByRole('button', { name: 'Generate conversations' }));
    const dialog = screen.getByRole('dialog', { name: 'Generate conversations' });
    await userEvent.selectOptions(within(dialog).getByLabelText('Generator model'), await within(dialog).findByRole('option', { name: 'Mini (gpt-4o-mini)' }));
    expect(await within(dialog).findByRole('option', { name: 'old.pdf (3 pages)' })).toBeInTheDocument();
    failUpload = true;
    await userEvent.upload(within(dialog).getByLabelText('Or upload a PDF or text file'), new File(['%PDF-1.4'], 'scan.pdf', { type: 'application/pdf' }));
    expect(await within(dialog).findByText('The PDF has no text layer (a scan?)')).toBeInTheDocument();
    failUpload = false;
    await userEvent.upload(within(dialog).getByLabelText('Or upload a PDF or text file'), new File(['Refunds take 5 days.'], 'handbook.txt', { type: 'text/plain' }));
    await waitFor(() => expect(within(dialog).getByLabelText('Document')).toHaveValue('2'));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Generate' }));
    await within(dialog).findByTestId('generation-progress');
    const post = requestsOf(fetch).find((r) => new URL(r.url).pathname === `${gen}/conversations`)!;
    expect(await post.json()).toEqual({ model_id: 5, document_id: 2, count: 5, turns: 3, max_cost_micros: null });
  });
});
