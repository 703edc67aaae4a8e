import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { modelConfig } from '@/test/providerFixtures';
import { apiError, dataset, project } from '@/features/datasets/testFixtures';
import { judgments } from '../testFixtures';

const base = '/api/projects/3/datasets/11';
const models = [modelConfig({ id: 5, name: 'Fake Fast', model: 'fake-fast' }), modelConfig({ id: 6, name: 'Fake Smart', model: 'fake-smart' })];

function serve(role: string, start: () => Response = () => json({ id: 77 }, 202), caseCount = 2) {
  return mockFetch(async (req) => {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path === '/api/projects/3') return json(project(role));
    if (path === base) return json(dataset({ case_count: caseCount }));
    if (path === `${base}/cases`) return json({ items: [], total: 0, page: 1, page_size: 50 });
    if (path === '/api/projects/3/models') return json({ items: models, total: 2, page: 1, page_size: 100 });
    if (path === `${base}/judgments` && req.method === 'POST') return start();
    if (path === `${base}/judgments`) return json({ items: [], total: 0, page: 1, page_size: 10 });
    if (path === '/api/projects/3/runs/77/judgments') return json(judgments());
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}

async function openDialog() {
  renderProject('/projects/3/datasets/11');
  await userEvent.click(await screen.findByRole('button', { name: 'Judge questions' }));
  return screen.getByRole('dialog', { name: 'Judge questions' });
}

describe('JudgeConfigDialog', () => {
  it('checks the form, starts judge mode with the chosen judges and criteria, and opens the results', async () => {
    const fetch = serve('editor');
    const dialog = await openDialog();
    expect(dialog).toHaveTextContent('rate every question of “Capitals” from 1 to 10');
    for (const name of ['Clarity', 'Difficulty', 'Relevance', 'Originality', 'Overall']) {
      expect(within(dialog).getByLabelText(name)).toBeChecked();
    }
    await userEvent.click(within(dialog).getByRole('button', { name: 'Start judging' }));
    expect(within(dialog).getByText('Choose at least one judge model.')).toBeInTheDocument();

    for (const name of ['Clarity', 'Difficulty', 'Relevance', 'Originality', 'Overall']) {
      await userEvent.click(within(dialog).getByLabelText(name));
    }
    await userEvent.click(await within(dialog).findByLabelText(/^Fake Fast/));
    await userEvent.click(within(dialog).getByLabelText(/^Fake Smart/));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Start judging' }));
    expect(within(dialog).getByText('Tick at least one criterion, or write an instruction.')).toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => r.method === 'POST')).toBe(false);

    await userEvent.click(within(dialog).getByLabelText('Relevance'));
    await userEvent.click(within(dialog).getByLabelText('Clarity'));
    await userEvent.type(within(dialog).getByLabelText('Instruction (optional)'), 'Prefer questions with one answer.');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Start judging' }));

    const post = requestsOf(fetch).find((r) => r.method === 'POST')!;
    expect(new URL(post.url).pathname).toBe(`${base}/judgments`);
    expect(await post.json()).toEqual({ judges: [5, 6], criteria: ['clarity', 'relevance'], instruction: 'Prefer questions with one answer.' });
    expect(await screen.findByRole('heading', { name: 'Question judgments' })).toBeInTheDocument();
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('shows the server’s field errors next to their fields', async () => {
    serve('editor', () =>
      json(apiError(422, 'VALIDATION_ERROR', 'Judge mode cannot start', { json: { judges: { '1': ['Model Fake Smart is archived: restore it to judge with it'] } } }), 422),
    );
    const dialog = await openDialog();
    await userEvent.click(await within(dialog).findByLabelText(/^Fake Fast/));
    await userEvent.click(within(dialog).getByLabelText(/^Fake Smart/));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Start judging' }));
    expect(await within(dialog).findByText('Model Fake Smart is archived: restore it to judge with it')).toBeInTheDocument();
    expect(within(dialog).getByRole('group', { name: 'Judge models' })).toHaveAccessibleDescription('Model Fake Smart is archived: restore it to judge with it');
  });

  it('refuses more than five judges, and an instruction over 4,000 characters, before sending', async () => {
    const many = Array.from({ length: 6 }, (_, i) => modelConfig({ id: 20 + i, name: `Judge ${i}`, model: `m-${i}` }));
    const fetch = mockFetch(async (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/api/projects/3') return json(project('editor'));
      if (path === base) return json(dataset());
      if (path === '/api/projects/3/models') return json({ items: many, total: 6, page: 1, page_size: 100 });
      return json({ items: [], total: 0, page: 1, page_size: 50 });
    });
    const dialog = await openDialog();
    for (let i = 0; i < 6; i++) await userEvent.click(await within(dialog).findByLabelText(new RegExp(`^Judge ${i}`)));
    const instruction = within(dialog).getByLabelText('Instruction (optional)');
    await userEvent.click(instruction);
    await userEvent.paste('x'.repeat(4001));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Start judging' }));
    expect(within(dialog).getByText('Choose at most 5 judge models.')).toBeInTheDocument();
    expect(within(dialog).getByText('At most 4,000 characters.')).toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => r.method === 'POST')).toBe(false);
  });

  it('is only offered to editors, and only for a dataset with questions', async () => {
    serve('viewer');
    const { unmount } = renderProject('/projects/3/datasets/11');
    expect(await screen.findByRole('heading', { name: 'Capitals' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Judge questions' })).not.toBeInTheDocument();
    unmount();
    serve('editor', undefined, 0);
    renderProject('/projects/3/datasets/11');
    expect(await screen.findByRole('button', { name: 'Edit details' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Judge questions' })).not.toBeInTheDocument();
  });

  it('lists the dataset’s judgments in their own section', async () => {
    mockFetch(async (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/api/projects/3') return json(project('viewer'));
      if (path === base) return json(dataset());
      if (path === `${base}/judgments`) {
        return json({ items: [{ id: 77, name: 'Judge questions: Capitals v3', total: 2, created_at: '2024-01-01T00:00:00Z' }], total: 1, page: 1, page_size: 10 });
      }
      return json({ items: [], total: 0, page: 1, page_size: 50 });
    });
    renderProject('/projects/3/datasets/11');
    await userEvent.click(await screen.findByRole('button', { name: 'Judgments' }));
    const table = await screen.findByRole('table', { name: 'Judgments of this dataset' });
    const link = within(table).getByRole('link', { name: 'Judge questions: Capitals v3' });
    expect(link).toHaveAttribute('href', '/projects/3/datasets/11/judgments/77');
    await waitFor(() => expect(within(table).getAllByRole('row')).toHaveLength(2));
  });
});
