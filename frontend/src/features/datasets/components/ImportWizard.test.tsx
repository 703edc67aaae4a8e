import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { apiError, dataset, project } from '../testFixtures';
import { guessRole, toMapping } from './ImportWizard';

const base = '/api/projects/3/datasets/11';
const preview = {
  format: 'csv',
  columns: ['question', 'answer', 'tags', 'difficulty'],
  rows: [
    { question: 'Capital of France?', answer: 'Paris', tags: 'geo', difficulty: 'easy' },
    { question: '', answer: 'Berlin', tags: 'geo', difficulty: 'easy' },
  ],
  total_rows: 2,
  row_numbers: [2, 3], // the file's lines: the header is line 1
};

function serve(importResponse: () => Response) {
  return mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    if (path === '/api/projects/3') return json(project('editor'));
    if (path === base) return json(dataset({ case_count: 0, version: 1 }));
    if (path === `${base}/cases`) return json({ items: [], total: 0, page: 1, page_size: 100 });
    if (path === `${base}/import/preview`) return json(preview);
    if (path === `${base}/import`) return importResponse();
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}

async function openWizard() {
  renderProject('/projects/3/datasets/11');
  await userEvent.click(await screen.findByRole('button', { name: 'Import' }));
  return screen.getByRole('dialog', { name: 'Import cases' });
}

const csv = () => new File(['question,answer,tags,difficulty\nCapital of France?,Paris,geo,easy\n,Berlin,geo,easy\n'], 'capitals.csv', { type: 'text/csv' });

describe('ImportWizard', () => {
  it('guesses column roles and builds the mapping', () => {
    expect(['question', 'answer', 'tags', 'difficulty', 'metadata', 'id'].map(guessRole)).toEqual(['variable', 'expected', 'tags', 'difficulty', 'metadata', 'ignore']);
    expect(toMapping({ question: 'variable', 'Context text': 'variable', answer: 'expected', tags: 'tags', metadata: 'metadata', id: 'ignore' }, { question: 'q' })).toEqual({
      variables: { question: 'q', 'Context text': 'Context_text' },
      expected: 'answer',
      tags: 'tags',
      difficulty: null,
      metadata: 'metadata',
    });
  });

  it('previews, maps, and lists every bad row with nothing imported', async () => {
    const fetch = serve(() =>
      json(apiError(422, 'VALIDATION_ERROR', '3 row error(s); nothing was imported', { rows: [{ row: 3, field: 'question', reason: 'Missing value.' }, { row: 3, field: 'difficulty', reason: 'Must be easy, medium or hard.' }], row_error_count: 3 }), 422),
    );
    const dialog = await openWizard();
    expect(within(dialog).getByRole('button', { name: 'Import' })).toBeDisabled();
    await userEvent.upload(within(dialog).getByLabelText('File'), csv());
    const table = await within(dialog).findByRole('table', { name: 'Import preview' });
    expect(within(table).getAllByRole('row')).toHaveLength(3);
    expect(within(table).getByText('Capital of France?')).toBeInTheDocument();
    // the preview numbers rows as the errors do: Berlin's row (empty question) is row 3
    expect(within(table).getByText('Berlin').closest('tr')!.firstElementChild).toHaveTextContent('3');
    expect(within(dialog).getByText('Preview (first 2 of 2 rows)')).toBeInTheDocument();
    expect(within(dialog).getByLabelText('answer')).toHaveValue('expected');
    expect(within(dialog).getByLabelText('question')).toHaveValue('variable');
    expect(within(dialog).getByLabelText('Variable name for question')).toHaveValue('question');

    await userEvent.click(within(dialog).getByRole('button', { name: 'Import' }));
    const errors = await within(dialog).findByTestId('import-errors');
    expect(errors).toHaveTextContent('Nothing was imported');
    expect(within(errors).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['Row 3, question: Missing value.', 'Row 3, difficulty: Must be easy, medium or hard.']);
    expect(errors).toHaveTextContent('…and 1 more.');

    const previewReq = await requestsOf(fetch).find((r) => new URL(r.url).pathname === `${base}/import/preview`)!.json();
    expect(previewReq.format).toBe('csv');
    expect(previewReq.base64).toBe(true);
    expect(atob(previewReq.content)).toContain('Capital of France?');
    const body = await requestsOf(fetch).find((r) => new URL(r.url).pathname === `${base}/import`)!.json();
    expect(body.mapping).toEqual({ variables: { question: 'question' }, expected: 'answer', tags: 'tags', difficulty: 'difficulty', metadata: null });
    expect(body.format).toBe('csv');
  });

  it('refuses a mapping without variables or with two expected columns, then imports', async () => {
    serve(() => json({ number: 2, note: null, case_count: 2, created_by: 1, created_at: '2024-01-02T00:00:00Z' }, 201));
    const dialog = await openWizard();
    await userEvent.upload(within(dialog).getByLabelText('File'), csv());
    await within(dialog).findByRole('table', { name: 'Import preview' });
    await userEvent.selectOptions(within(dialog).getByLabelText('question'), 'expected');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Import' }));
    expect(within(dialog).getByRole('alert')).toHaveTextContent('Map only one column to expected.');
    await userEvent.selectOptions(within(dialog).getByLabelText('question'), 'ignore');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Import' }));
    expect(within(dialog).getByRole('alert')).toHaveTextContent('Map at least one column to a variable.');
    await userEvent.selectOptions(within(dialog).getByLabelText('question'), 'variable');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Import' }));
    expect(await within(dialog).findByText('Imported. The dataset now has 2 cases in version 2.')).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  });

  it('shows mapping errors from the server, and imports JSONL cases without a mapping', async () => {
    let jsonl = false;
    const fetch = mockFetch(async (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/api/projects/3') return json(project('editor'));
      if (path === base) return json(dataset({ case_count: 0, version: 1 }));
      if (path === `${base}/cases`) return json({ items: [], total: 0, page: 1, page_size: 100 });
      if (path === `${base}/import/preview`)
        return json(jsonl ? { format: 'jsonl', columns: ['input', 'expected'], rows: [{ input: { question: 'Q' }, expected: null }], total_rows: 1 } : preview);
      if (path === `${base}/import`)
        return jsonl
          ? json({ number: 2, note: null, case_count: 1, created_by: 1, created_at: '2024-01-02T00:00:00Z' }, 201)
          : json(apiError(422, 'VALIDATION_ERROR', 'The mapping does not fit the file', { json: { 'mapping.variables': ["Unknown variable 'answer_text' (known: question)"] } }), 422);
      return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
    });
    const dialog = await openWizard();
    await userEvent.upload(within(dialog).getByLabelText('File'), csv());
    await within(dialog).findByRole('table', { name: 'Import preview' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Import' }));
    const errors = await within(dialog).findByTestId('import-errors');
    expect(errors).toHaveTextContent('The mapping does not fit the file');
    expect(errors).toHaveTextContent("Mapping, variables: Unknown variable 'answer_text' (known: question)");

    jsonl = true;
    await userEvent.upload(within(dialog).getByLabelText('File'), new File(['{"input": {"question": "Q"}}\n'], 'cases.jsonl'));
    expect(await within(dialog).findByText(/they are imported as they are/)).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Import' }));
    expect(await within(dialog).findByText('Imported. The dataset now has 1 case in version 2.')).toBeInTheDocument();
    const body = await requestsOf(fetch).filter((r) => new URL(r.url).pathname === `${base}/import`).at(-1)!.json();
    expect(body.format).toBe('jsonl');
    expect(body.mapping).toBeUndefined();
  });

  it('refuses other file types before uploading', async () => {
    const fetch = serve(() => json({}, 500));
    const dialog = await openWizard();
    await userEvent.upload(within(dialog).getByLabelText('File'), new File(['x'], 'notes.txt', { type: 'text/plain' }), { applyAccept: false });
    expect(within(dialog).getByText('Choose a .csv or .jsonl file.')).toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => r.url.includes('/import'))).toBe(false);
  });
});
