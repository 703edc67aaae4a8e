import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { apiError, dataset, project } from '../testFixtures';

type Extra = (req: Request, path: string, url: URL) => Response | Promise<Response | undefined> | undefined;

function serve(role: string, extra: Extra) {
  return mockFetch(async (req) => {
    const url = new URL(req.url);
    const hit = await extra(req, url.pathname, url);
    if (hit) return hit;
    if (url.pathname === '/api/projects/3') return json(project(role));
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}

const list = (items: unknown[], total = items.length, page = 1) => json({ items, total, page, page_size: 20 });

describe('DatasetsPage', () => {
  it('is a project tab that lists datasets with kind, cases and version', async () => {
    serve('viewer', (_req, path) => (path === '/api/projects/3/datasets' ? list([dataset(), dataset({ id: 12, name: 'Chats', kind: 'conversations', version: 1, case_count: 1234, archived_at: null })]) : undefined));
    renderProject('/projects/3/datasets');
    const tabs = await screen.findByRole('navigation', { name: 'Project sections' });
    expect(within(tabs).getByRole('link', { name: 'Datasets' })).toHaveAttribute('aria-current', 'page');
    const table = await screen.findByRole('table', { name: 'Datasets' });
    const rows = within(table).getAllByRole('row');
    expect(rows).toHaveLength(3);
    expect(within(rows[1]).getByRole('link', { name: 'Capitals' })).toHaveAttribute('href', '/projects/3/datasets/11');
    expect(within(rows[1]).getByText('Questions')).toBeInTheDocument();
    expect(within(rows[1]).getByText('v3')).toBeInTheDocument();
    expect(within(rows[2]).getByText('Conversations')).toBeInTheDocument();
    expect(within(rows[2]).getByText('1,234')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'New dataset' })).not.toBeInTheDocument();
  });

  it('sends the search (debounced), kind, tag and archived filters, and pages', async () => {
    const fetch = serve('editor', (_req, path, url) => {
      if (path !== '/api/projects/3/datasets') return undefined;
      const page = Number(url.searchParams.get('page'));
      return list([dataset({ id: page, name: `Set page ${page}` })], 45, page);
    });
    renderProject('/projects/3/datasets');
    expect(await screen.findByText('Set page 1')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Next' }));
    expect(await screen.findByText('Set page 2')).toBeInTheDocument();
    expect(screen.getByText('Page 2 of 3')).toBeInTheDocument();

    await userEvent.type(screen.getByLabelText('Search'), 'capi');
    await userEvent.selectOptions(screen.getByLabelText('Kind'), 'cases');
    await userEvent.type(screen.getByLabelText('Tag'), 'geo');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Show archived' }));
    await waitFor(() => {
      const last = new URL(requestsOf(fetch).filter((r) => new URL(r.url).pathname === '/api/projects/3/datasets').at(-1)!.url);
      expect(Object.fromEntries(last.searchParams)).toEqual({ page: '1', page_size: '20', q: 'capi', kind: 'cases', tag: 'geo', include_archived: 'true' });
    });
    // Debounced: no request for the partial search "c", "ca", "cap".
    const qs = requestsOf(fetch).map((r) => new URL(r.url).searchParams.get('q')).filter(Boolean);
    expect(qs.every((q) => q === 'capi')).toBe(true);
  });

  it('shows the empty state, creates a dataset and opens it', async () => {
    const fetch = serve('editor', (req, path) => {
      if (path === '/api/projects/3/datasets' && req.method === 'GET') return list([]);
      if (path === '/api/projects/3/datasets' && req.method === 'POST') return json(dataset({ id: 21, name: 'New set', kind: 'cases', version: 1, case_count: 0 }), 201);
      if (path === '/api/projects/3/datasets/21') return json(dataset({ id: 21, name: 'New set', kind: 'cases', version: 1, case_count: 0 }));
      if (path === '/api/projects/3/datasets/21/cases') return json({ items: [], total: 0, page: 1, page_size: 100 });
      return undefined;
    });
    renderProject('/projects/3/datasets');
    expect(await screen.findByText('Import or generate your first dataset')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'New dataset' }));
    const dialog = screen.getByRole('dialog', { name: 'New dataset' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Create dataset' }));
    expect(within(dialog).getByText('Enter a name.')).toBeInTheDocument();
    await userEvent.type(within(dialog).getByLabelText('Name'), 'New set');
    await userEvent.selectOptions(within(dialog).getByLabelText('Kind'), 'cases');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Create dataset' }));
    expect(await screen.findByRole('heading', { name: 'New set' })).toBeInTheDocument();
    expect(await screen.findByText('No cases yet')).toBeInTheDocument();
    const post = requestsOf(fetch).find((r) => r.method === 'POST')!;
    expect(await post.json()).toEqual({ name: 'New set', kind: 'cases' });
  });

  it('closes the create dialog on Escape', async () => {
    serve('editor', (_req, path) => (path === '/api/projects/3/datasets' ? list([]) : undefined));
    renderProject('/projects/3/datasets');
    await userEvent.click(await screen.findByRole('button', { name: 'New dataset' }));
    expect(screen.getByRole('dialog', { name: 'New dataset' })).toBeInTheDocument();
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('shows the server’s error with a retry', async () => {
    let fail = true;
    serve('editor', (_req, path) => (path === '/api/projects/3/datasets' ? (fail ? json(apiError(503, 'UNAVAILABLE', 'Try again shortly'), 503) : list([])) : undefined));
    renderProject('/projects/3/datasets');
    expect(await screen.findByText('Try again shortly')).toBeInTheDocument();
    fail = false;
    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByText('Import or generate your first dataset')).toBeInTheDocument();
  });

  it('filters by difficulty and by a tag clicked on a row, and manages tags: rename and remove on every dataset', async () => {
    let tags = [{ tag: 'geo', count: 2 }, { tag: 'math', count: 1 }];
    const fetch = serve('editor', async (req, path) => {
      if (path === '/api/projects/3/datasets') return list([dataset({ tags: ['geo', 'math'] })]);
      if (path === '/api/projects/3/datasets/tags') return json({ items: tags });
      if (path === '/api/projects/3/datasets/tags/rename') {
        const body = await req.clone().json();
        tags = [{ tag: body.to, count: 2 }, { tag: 'math', count: 1 }];
        return json({ datasets: 2 });
      }
      if (path === '/api/projects/3/datasets/tags/remove') {
        tags = tags.filter((t) => t.tag !== 'math');
        return json({ datasets: 1 });
      }
      return undefined;
    });
    const user = userEvent.setup();
    renderProject('/projects/3/datasets');
    const lastList = () => Object.fromEntries(new URL(requestsOf(fetch).filter((r) => new URL(r.url).pathname === '/api/projects/3/datasets').at(-1)!.url).searchParams);
    await screen.findByText('Capitals');
    await user.selectOptions(screen.getByLabelText('Difficulty'), 'hard');
    await waitFor(() => expect(lastList()).toMatchObject({ difficulty: 'hard' }));
    await user.click(within(screen.getByLabelText('Tags of Capitals')).getByRole('button', { name: 'math' }));
    await waitFor(() => expect(lastList()).toMatchObject({ tag: 'math', difficulty: 'hard' }));
    expect(screen.getByLabelText('Tag')).toHaveValue('math');

    await user.click(screen.getByRole('button', { name: 'Manage tags' }));
    const dialog = screen.getByRole('dialog', { name: 'Dataset tags' });
    expect(await within(dialog).findByText('2 datasets')).toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Rename geo' }));
    const name = within(dialog).getByLabelText('New name for geo');
    await user.clear(name);
    await user.type(name, 'geography');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText('Renamed “geo” to “geography” on 2 datasets.')).toBeInTheDocument();
    expect(await within(dialog).findByText('geography')).toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Remove math' }));
    await user.click(within(dialog).getByRole('button', { name: 'Remove from 1' }));
    expect(await within(dialog).findByText('Removed “math” from 1 dataset.')).toBeInTheDocument();
    await waitFor(() => expect(within(dialog).queryByText('math')).not.toBeInTheDocument());
    const posts = requestsOf(fetch).filter((r) => r.method === 'POST');
    expect(await Promise.all(posts.map((r) => r.json()))).toEqual([{ from: 'geo', to: 'geography' }, { tag: 'math' }]);
  });
});
