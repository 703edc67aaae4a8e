import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import type { DatasetKind } from '../api';
import { apiError, kase } from '../testFixtures';
import { CaseDialog } from './CaseDialog';

const bulk = '/api/projects/3/datasets/11/cases/bulk';

function setup(kind: DatasetKind, reply: (body: { cases: unknown[] }) => Response = () => json({ version: { number: 4 }, cases: [] }, 201), editing = null as Parameters<typeof CaseDialog>[0]['editing']) {
  const fetch = mockFetch(async (req) => {
    if (req.method === 'POST' && new URL(req.url).pathname === bulk) return reply(await req.clone().json());
    if (req.method === 'PATCH') return json({ version: { number: 4 }, case: null });
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
  let closed = 0;
  renderWithProviders(<CaseDialog projectId={3} datasetId={11} kind={kind} open editing={editing} onClose={() => closed++} />);
  const dialog = screen.getByRole('dialog', { name: editing ? 'Edit case' : 'Add case' });
  return { fetch, dialog, closed: () => closed };
}

const bodies = async (fetch: ReturnType<typeof mockFetch>) => Promise.all(requestsOf(fetch).filter((r) => r.method === 'POST').map((r) => r.json()));

describe('CaseDialog', () => {
  it('adds several questions as one version: a form per case, "Add another case", one request', async () => {
    const user = userEvent.setup();
    const { fetch, dialog, closed } = setup('questions');
    await user.type(within(dialog).getByLabelText('Question'), 'Capital of Peru?');
    await user.type(within(dialog).getByLabelText('Expected answer (optional)'), 'Lima');
    await user.type(within(dialog).getByLabelText('Tags'), 'geo, south america');
    await user.selectOptions(within(dialog).getByLabelText('Difficulty'), 'medium');
    await user.click(within(dialog).getByRole('button', { name: 'Add another case' }));
    const second = within(dialog).getByRole('region', { name: 'Case 2 of 2' });
    await user.type(within(second).getByLabelText('Question'), 'Capital of Chile?');
    await user.click(within(dialog).getByRole('button', { name: 'Add 2 cases' }));
    await waitFor(() => expect(closed()).toBe(1));
    expect(await bodies(fetch)).toEqual([{
      cases: [
        { input: { question: 'Capital of Peru?' }, expected: { answer: 'Lima' }, tags: ['geo', 'south america'], difficulty: 'medium' },
        { input: { question: 'Capital of Chile?' }, expected: null, tags: [], difficulty: null },
      ],
      note: null,
    }]);
  });

  it('refuses an empty question at its field and sends nothing', async () => {
    const user = userEvent.setup();
    const { fetch, dialog } = setup('questions');
    await user.click(within(dialog).getByRole('button', { name: 'Add case' }));
    expect(within(dialog).getByText('Enter the question')).toBeInTheDocument();
    expect(within(dialog).getByLabelText('Question')).toHaveAttribute('aria-invalid', 'true');
    expect(requestsOf(fetch)).toHaveLength(0);
  });

  it('shows the server’s 422 at the fields of the case it names, keeping what was entered', async () => {
    const user = userEvent.setup();
    const { dialog, closed } = setup('questions', () =>
      json(apiError(422, 'VALIDATION_ERROR', 'Some cases are not valid for this dataset kind', { json: { cases: { 1: { 'input.question': ['question is longer than 100000 characters'] } } } }), 422),
    );
    await user.type(within(dialog).getByLabelText('Question'), 'One');
    await user.click(within(dialog).getByRole('button', { name: 'Add another case' }));
    const second = within(dialog).getByRole('region', { name: 'Case 2 of 2' });
    await user.type(within(second).getByLabelText('Question'), 'Two');
    await user.click(within(dialog).getByRole('button', { name: 'Add 2 cases' }));
    expect(await within(second).findByText('question is longer than 100000 characters')).toBeInTheDocument();
    expect(within(dialog).getByText(/see the fields marked below/)).toBeInTheDocument();
    const first = within(dialog).getByRole('region', { name: 'Case 1 of 2' });
    expect(within(first).getByLabelText('Question')).toHaveValue('One');
    expect(within(second).getByLabelText('Question')).toHaveValue('Two');
    expect(closed()).toBe(0);
  });

  it('takes template variables as name and value, checking the names', async () => {
    const user = userEvent.setup();
    const { fetch, dialog } = setup('cases');
    await user.type(within(dialog).getByLabelText('Variable 1 name'), '1city');
    await user.type(within(dialog).getByLabelText('Variable 1 value'), 'Paris');
    await user.click(within(dialog).getByRole('button', { name: 'Add variable' }));
    await user.type(within(dialog).getByLabelText('Variable 2 name'), 'tone');
    await user.type(within(dialog).getByLabelText('Variable 2 value'), 'warm');
    await user.type(within(dialog).getByLabelText('Expected output (optional)'), 'Bonjour');
    await user.click(within(dialog).getByRole('button', { name: 'Add case' }));
    expect(within(dialog).getByText(/“1city” is not a variable name/)).toBeInTheDocument();
    expect(requestsOf(fetch)).toHaveLength(0);
    await user.clear(within(dialog).getByLabelText('Variable 1 name'));
    await user.type(within(dialog).getByLabelText('Variable 1 name'), 'city');
    await user.click(within(dialog).getByRole('button', { name: 'Add case' }));
    await waitFor(() => expect(requestsOf(fetch)).toHaveLength(1));
    expect((await bodies(fetch))[0].cases).toEqual([{ input: { city: 'Paris', tone: 'warm' }, expected: { output: 'Bonjour' }, tags: [], difficulty: null }]);
  });

  it('edits a conversation turn by turn, each user turn with its ground truth', async () => {
    const user = userEvent.setup();
    const { fetch, dialog } = setup('conversations');
    await user.type(within(dialog).getByLabelText('Message 1 text'), 'What is RAG?');
    await user.click(within(dialog).getByRole('button', { name: 'Add turn' }));
    await user.type(within(dialog).getByLabelText('Message 2 text'), 'Retrieval augmented generation.');
    await user.type(within(dialog).getByLabelText('Message 3 text'), 'Why use it?');
    await user.type(within(dialog).getByLabelText('Turn 1 ground truth'), 'Retrieval augmented generation');
    await user.click(within(dialog).getByRole('button', { name: 'Add case' }));
    expect(within(dialog).getByText('Enter the ground truth of this turn')).toBeInTheDocument();
    expect(requestsOf(fetch)).toHaveLength(0);
    await user.type(within(dialog).getByLabelText('Turn 2 ground truth'), 'Grounded answers');
    await user.click(within(dialog).getByRole('button', { name: 'Add case' }));
    await waitFor(() => expect(requestsOf(fetch)).toHaveLength(1));
    expect((await bodies(fetch))[0].cases[0]).toEqual({
      input: { messages: [{ role: 'user', content: 'What is RAG?' }, { role: 'assistant', content: 'Retrieval augmented generation.' }, { role: 'user', content: 'Why use it?' }] },
      expected: { turns: ['Retrieval augmented generation', 'Grounded answers'] },
      tags: [],
      difficulty: null,
    });
  });

  it('takes a trace as JSON and says when it is not valid', async () => {
    const user = userEvent.setup();
    const { fetch, dialog } = setup('traces');
    const trace = within(dialog).getByLabelText('Trace (JSON)');
    await user.clear(trace);
    await user.type(trace, '{{"messages": ');
    await user.click(within(dialog).getByRole('button', { name: 'Add case' }));
    expect(within(dialog).getByText(/^Not valid JSON/)).toBeInTheDocument();
    await user.clear(trace);
    await user.type(trace, '{{"steps": 1}');
    await user.click(within(dialog).getByRole('button', { name: 'Add case' }));
    expect(within(dialog).getByText(/Must be \{"messages"/)).toBeInTheDocument();
    expect(requestsOf(fetch)).toHaveLength(0);
  });

  it('edits one case in place with a PATCH, keeping fields the form does not show', async () => {
    const user = userEvent.setup();
    const { fetch, dialog } = setup('questions', undefined, kase(2, { expected: { answer: 'Old', source: 'atlas' } }));
    expect(within(dialog).getByLabelText('Question')).toHaveValue('Question 2');
    expect(within(dialog).queryByRole('button', { name: 'Add another case' })).not.toBeInTheDocument();
    await user.clear(within(dialog).getByLabelText('Expected answer (optional)'));
    await user.type(within(dialog).getByLabelText('Expected answer (optional)'), 'New');
    await user.click(within(dialog).getByRole('button', { name: 'Save case' }));
    await waitFor(() => expect(requestsOf(fetch).filter((r) => r.method === 'PATCH')).toHaveLength(1));
    const patch = requestsOf(fetch).find((r) => r.method === 'PATCH')!;
    expect(new URL(patch.url).pathname).toBe('/api/projects/3/datasets/11/cases/1002');
    expect(await patch.json()).toEqual({ input: { question: 'Question 2' }, expected: { source: 'atlas', answer: 'New' }, tags: ['geo'], difficulty: 'easy' });
  });

  it('sends If-Match with the case id it loaded and, on 412, shows the notice and keeps the edit', async () => {
    const user = userEvent.setup();
    const fetch = mockFetch(async (req) => {
      if (req.method === 'PATCH') return json({ ...apiError(412, 'STALE_WRITE', 'Changed elsewhere'), current: null }, 412);
      return json({ items: [], total: 0, page: 1, page_size: 50 });
    });
    let closed = 0;
    renderWithProviders(<CaseDialog projectId={3} datasetId={11} kind="questions" open editing={kase(2)} onClose={() => closed++} />);
    const dialog = screen.getByRole('dialog', { name: 'Edit case' });
    await user.clear(within(dialog).getByLabelText('Question'));
    await user.type(within(dialog).getByLabelText('Question'), 'My new question');
    await user.click(within(dialog).getByRole('button', { name: 'Save case' }));
    const alert = await within(dialog).findByText(/This was changed elsewhere — reload to see the latest/);
    expect(alert.closest('[role="alert"]')).toHaveTextContent('My new question');
    const patch = requestsOf(fetch).find((r) => r.method === 'PATCH')!;
    expect(patch.headers.get('If-Match')).toBe('"1002"');
    await user.click(within(dialog).getByRole('button', { name: 'Reload' }));
    expect(within(dialog).getByLabelText('Question')).toHaveValue('My new question');
    expect(within(dialog).queryByText(/This was changed elsewhere/)).not.toBeInTheDocument();
    expect(closed).toBe(0);
  });
});
