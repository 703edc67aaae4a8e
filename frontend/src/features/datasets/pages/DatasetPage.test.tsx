import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { apiError, dataset, kase, project, ts } from '../testFixtures';

type Extra = (req: Request, path: string, url: URL) => Response | Promise<Response | undefined> | undefined;
const base = '/api/projects/3/datasets/11';

/** A dataset of `total` cases served page by page. */
function serve(role: string, total: number, extra: Extra = () => undefined) {
  return mockFetch(async (req) => {
    const url = new URL(req.url);
    const path = url.pathname;
    const hit = await extra(req, path, url);
    if (hit) return hit;
    if (path === '/api/projects/3') return json(project(role));
    if (path === base && req.method === 'GET') return json(dataset({ case_count: total }));
    if (path === `${base}/cases` && req.method === 'GET') {
      const page = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('page_size'));
      const start = (page - 1) * size;
      const items = Array.from({ length: Math.max(0, Math.min(size, total - start)) }, (_, i) => kase(start + i + 1));
      return json({ items, total, page, page_size: size });
    }
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}

const open = () => renderProject('/projects/3/datasets/11');

describe('DatasetPage', () => {
  it('shows the header, and renders only a window of 10,000 cases, fetching only the pages in view', async () => {
    const fetch = serve('viewer', 10_000);
    open();
    expect(await screen.findByRole('heading', { name: 'Capitals' })).toBeInTheDocument();
    expect(screen.getByText('Questions')).toBeInTheDocument();
    expect(screen.getByTestId('dataset-summary')).toHaveTextContent('10,000 cases in version 3');
    const table = await screen.findByRole('table', { name: 'Cases' });
    expect(table).toHaveAttribute('aria-rowcount', '10001');
    expect(await within(table).findByText('Question 1')).toBeInTheDocument();
    const rows = within(table).getAllByRole('row');
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(40);
    expect(within(table).queryByText('Question 200')).not.toBeInTheDocument();
    const pages = requestsOf(fetch).filter((r) => new URL(r.url).pathname === `${base}/cases`).map((r) => new URL(r.url).searchParams.get('page'));
    expect(new Set(pages)).toEqual(new Set(['1']));
    expect(screen.queryByRole('button', { name: 'Add case' })).not.toBeInTheDocument();
  });

  it('filters cases by text, tag and difficulty', async () => {
    const fetch = serve('viewer', 3);
    open();
    await screen.findByText('Question 1');
    await userEvent.type(screen.getByLabelText('Search cases'), 'paris');
    await userEvent.type(screen.getByLabelText('Tag'), 'geo');
    await userEvent.selectOptions(screen.getByLabelText('Difficulty'), 'hard');
    await waitFor(() => {
      const last = new URL(requestsOf(fetch).filter((r) => new URL(r.url).pathname === `${base}/cases`).at(-1)!.url);
      expect(Object.fromEntries(last.searchParams)).toEqual({ page: '1', page_size: '100', q: 'paris', tag: 'geo', difficulty: 'hard' });
    });
  });

  it('edits and deletes a case', async () => {
    const fetch = serve('editor', 2, (req, path) => (path.startsWith(`${base}/cases/`) && req.method !== 'GET' ? json({ version: 4 }) : undefined));
    open();
    await screen.findByText('Question 2');
    await userEvent.click(screen.getByRole('button', { name: 'Edit case 2' }));
    const dialog = screen.getByRole('dialog', { name: 'Edit case' });
    expect(within(dialog).getByLabelText('Tags')).toHaveValue('geo');
    await userEvent.clear(within(dialog).getByLabelText('Tags'));
    await userEvent.type(within(dialog).getByLabelText('Tags'), 'europe');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save case' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    const patch = requestsOf(fetch).find((r) => r.method === 'PATCH')!;
    expect(new URL(patch.url).pathname).toBe(`${base}/cases/1002`);
    expect((await patch.json()).tags).toEqual(['europe']);

    await userEvent.click(screen.getByRole('button', { name: 'Delete case 1' }));
    await userEvent.click(within(screen.getByRole('dialog', { name: 'Delete case' })).getByRole('button', { name: 'Delete case' }));
    await waitFor(() => expect(requestsOf(fetch).some((r) => r.method === 'DELETE' && new URL(r.url).pathname === `${base}/cases/1001`)).toBe(true));
  });

  it('renames a dataset; a taken name is shown at the field', async () => {
    let attempt = 0;
    const fetch = serve('editor', 1, (req, path) => {
      if (path !== base || req.method !== 'PATCH') return undefined;
      attempt += 1;
      return attempt === 1
        ? json(apiError(409, 'NAME_TAKEN', 'A dataset with this name exists', { json: { name: ['A dataset with this name exists.'] } }), 409)
        : json(dataset({ name: 'World capitals' }));
    });
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Edit details' }));
    const dialog = screen.getByRole('dialog', { name: 'Edit dataset details' });
    expect(within(dialog).getByLabelText('Name')).toHaveValue('Capitals');
    await userEvent.clear(within(dialog).getByLabelText('Name'));
    await userEvent.type(within(dialog).getByLabelText('Name'), 'World capitals');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText('A dataset with this name exists.')).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    const patch = requestsOf(fetch).filter((r) => r.method === 'PATCH').at(-1)!;
    expect(await patch.json()).toEqual({ name: 'World capitals', description: 'Geography questions' });
  });

  it('offers archive when the dataset is used by runs', async () => {
    const fetch = serve('editor', 1, (req, path) => {
      if (path === base && req.method === 'DELETE') return json(apiError(409, 'DATASET_IN_USE', 'Runs use this dataset; archive it instead.'), 409);
      if (path === `${base}/archive`) return json(dataset({ archived_at: '2024-02-01T00:00:00Z' }));
      return undefined;
    });
    open();
    await screen.findByRole('heading', { name: 'Capitals' });
    await userEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete dataset' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete dataset' }));
    expect(await within(dialog).findByText('Runs use this dataset; archive it instead.')).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Archive instead' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(requestsOf(fetch).some((r) => r.method === 'POST' && new URL(r.url).pathname === `${base}/archive`)).toBe(true);
  });

  it('lists versions and shows the diff between two of them', async () => {
    const fetch = serve('viewer', 1, (_req, path) => {
      if (path === `${base}/versions`)
        return json({ items: [1, 2, 3].map((v) => ({ number: v, case_count: v, note: null, created_at: '2024-01-01T00:00:00Z' })), total: 3, page: 1, page_size: 100 });
      if (path === `${base}/diff`)
        return json({ added: [kase(7, { input: { question: 'New one' } })], removed: [kase(8, { input: { question: 'Old one' } })], changed: [{ before: kase(9, { expected: { answer: 'Before' } }), after: kase(9, { expected: { answer: 'After' } }) }] });
      return undefined;
    });
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Versions' }));
    const versions = await screen.findByRole('list', { name: 'Versions' });
    expect(within(versions).getAllByRole('listitem')).toHaveLength(3);
    expect(within(versions).getAllByRole('listitem')[0]).toHaveTextContent('v3Current3 cases');
    expect(await screen.findByText('1 added, 1 removed, 1 changed')).toBeInTheDocument();
    expect(within(screen.getByRole('list', { name: 'Added cases' })).getByText(/New one/)).toBeInTheDocument();
    expect(within(screen.getByRole('list', { name: 'Removed cases' })).getByText(/Old one/)).toBeInTheDocument();
    expect(screen.getByRole('list', { name: 'Changed cases' })).toHaveTextContent(/Before:.*→ Before.*After:.*→ After/);
    const diff = new URL(requestsOf(fetch).find((r) => new URL(r.url).pathname === `${base}/diff`)!.url);
    expect(Object.fromEntries(diff.searchParams)).toEqual({ from: '2', to: '3' });
    await userEvent.selectOptions(screen.getByLabelText('From'), '1');
    await waitFor(() => expect(requestsOf(fetch).some((r) => new URL(r.url).search === '?from=1&to=3')).toBe(true));

    // An older version's cases, read-only
    await userEvent.click(screen.getByRole('button', { name: 'View the cases of v1' }));
    expect(await screen.findByText(/Viewing version 1 \(read-only\)/)).toBeInTheDocument();
    await waitFor(() => expect(requestsOf(fetch).some((r) => new URL(r.url).pathname === `${base}/cases` && new URL(r.url).searchParams.get('version') === '1')).toBe(true));
    await userEvent.click(screen.getByRole('button', { name: 'Back to the latest' }));
    expect(screen.queryByText(/Viewing version 1/)).not.toBeInTheDocument();
  });

  it('draws the coverage as labelled bars', async () => {
    serve('viewer', 1, (_req, path) =>
      path === `${base}/coverage`
        ? json({ version: 3, case_count: 9, by_tag: [{ key: 'geo', count: 8 }, { key: 'math', count: 2 }], by_length: [{ key: 'XS', count: 10 }], by_difficulty: [], by_language: [{ key: 'en', count: 10 }] })
        : undefined,
    );
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Coverage' }));
    const tags = await screen.findByRole('list', { name: 'By tag' });
    // A case can carry two tags: the total is the version's cases, not the bars' sum.
    expect(within(tags).getAllByRole('listitem')[0]).toHaveTextContent('geo8 of 9 cases');
    expect(screen.getByText(/^9 cases in version 3\./)).toBeInTheDocument();
    expect(screen.getByRole('list', { name: 'By length' })).toHaveTextContent('XS10');
    expect(screen.getByText('No data.')).toBeInTheDocument();
  });

  it('exports as a streamed download link, and says when the dataset does not exist', async () => {
    serve('viewer', 1, () => undefined);
    const { unmount } = open();
    expect(await screen.findByRole('link', { name: 'Export CSV' })).toHaveAttribute('href', `${base}/export?format=csv`);
    expect(screen.getByRole('link', { name: 'Export JSONL' })).toHaveAttribute('download');
    unmount();
    serve('viewer', 1, (_req, path) => (path === base ? json(apiError(404, 'NOT_FOUND', 'Not found'), 404) : undefined));
    open();
    expect(await screen.findByText('Dataset not found')).toBeInTheDocument();
  });

  it('adds and removes the dataset’s own tags', async () => {
    const fetch = serve('editor', 1, async (req, path) => {
      if (path === '/api/projects/3/datasets/tags') return json({ items: [{ tag: 'benchmark', count: 3 }] });
      if (path === base && req.method === 'PATCH') return json(dataset({ tags: (await req.clone().json()).tags }));
      if (path === base && req.method === 'GET') return json(dataset({ tags: ['geo'] }));
      return undefined;
    });
    const user = userEvent.setup();
    open();
    const tags = await screen.findByRole('list', { name: 'Dataset tags' });
    expect(within(tags).getByText('geo')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Add tag' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Enter a tag');
    await user.type(screen.getByLabelText('New dataset tag'), 'geo');
    await user.click(screen.getByRole('button', { name: 'Add tag' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Already tagged “geo”');
    await user.clear(screen.getByLabelText('New dataset tag'));
    await user.type(screen.getByLabelText('New dataset tag'), 'benchmark');
    await user.click(screen.getByRole('button', { name: 'Add tag' }));
    await waitFor(() => expect(requestsOf(fetch).filter((r) => r.method === 'PATCH')).toHaveLength(1));
    await user.click(screen.getByRole('button', { name: 'Remove tag geo' }));
    await waitFor(() => expect(requestsOf(fetch).filter((r) => r.method === 'PATCH')).toHaveLength(2));
    const bodies = await Promise.all(requestsOf(fetch).filter((r) => r.method === 'PATCH').map((r) => r.json()));
    expect(bodies).toEqual([{ tags: ['geo', 'benchmark'] }, { tags: [] }]);
  });

  it('shows how a generated dataset was made, and says when people wrote it', async () => {
    const origin = {
      type: 'generated', job_id: 42, kind: 'questions', model_id: 5, model_name: 'Fake fast', params: { temperature: 0.7 },
      spec: { model_id: 5, count: 10, topic: 'rivers', difficulty: 'hard', type_tags: ['factual'] }, document_name: null,
      prompt: [{ role: 'system', content: 'You write evaluation data' }, { role: 'user', content: 'Generate 10 distinct hard evaluation questions about: rivers.' }],
      requested: 10, received: 8, accepted: 6, cost_micros: 1234, started_at: ts, finished_at: ts,
    };
    serve('viewer', 1, (req, path) => (path === base && req.method === 'GET' ? json(dataset({ origin })) : undefined));
    const user = userEvent.setup();
    const { unmount } = open();
    await user.click(await screen.findByRole('button', { name: 'Origin' }));
    const panel = screen.getByTestId('dataset-origin');
    expect(panel).toHaveTextContent('Generator modelFake fast');
    expect(panel).toHaveTextContent('6 accepted of 8 received (10 asked for)');
    expect(panel).toHaveTextContent('Topicrivers');
    expect(panel).toHaveTextContent('Question typesfactual');
    expect(panel).toHaveTextContent('Model setting: temperature0.7');
    expect(panel).toHaveTextContent('Generate 10 distinct hard evaluation questions about: rivers.');
    unmount();
    serve('viewer', 1, (req, path) => (path === base && req.method === 'GET' ? json(dataset({ origin: { type: 'manual' } })) : undefined));
    open();
    await user.click(await screen.findByRole('button', { name: 'Origin' }));
    expect(screen.getByTestId('dataset-origin')).toHaveTextContent('Written by hand or imported');
  });
});
