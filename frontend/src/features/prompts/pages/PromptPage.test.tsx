import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { QueryClientProvider } from '@tanstack/react-query';
import { createMemoryRouter, RouterProvider } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { makeQueryClient } from '@/app/queryClient';
import { ProjectLayout } from '@/features/projects/pages/ProjectLayout';
import { json, mockFetch, requestsOf } from '@/test/utils';
import type { PromptDetail, PromptVersion } from '../api';
import { PromptPage } from './PromptPage';
import { PromptsPage } from './PromptsPage';

const ts = '2026-11-25T10:00:00Z';
const project = (role: string) => ({ id: 3, name: 'Alpha', slug: 'alpha', description: null, role, member_count: 1, created_at: ts, updated_at: ts });
const version = (over: Partial<PromptVersion>): PromptVersion => ({
  id: 40, prompt_id: 7, number: 1, template: 'Answer {{question}}', system: null, few_shots: [], tools: [], variables: ['question'],
  note: null, parent_id: null, created_by: 1, author: 'Ada', created_at: ts, ...over,
});
const v1 = version({});
const v2 = version({ id: 41, number: 2, template: 'Answer {{question}} briefly', parent_id: 40, note: 'Shorter answers' });
const detail = (production: PromptVersion): PromptDetail => ({
  id: 7, row_version: 1, name: 'Support', description: null, archived_at: null, created_at: ts, latest: v2,
  production_version_id: production.id, production_number: production.number, versions: [v2, v1],
});

function renderAt(route: string) {
  const router = createMemoryRouter(
    [{ path: '/projects/:projectId', element: <ProjectLayout />, children: [{ path: 'prompts', element: <PromptsPage /> }, { path: 'prompts/:promptId', element: <PromptPage /> }] }],
    { initialEntries: [route] },
  );
  render(
    <QueryClientProvider client={makeQueryClient({ retry: false })}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
}

function serve(role: string) {
  let production = v1;
  return mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    if (path === '/api/projects/3') return json(project(role));
    if (path === '/api/projects/3/prompts') return json({ items: [{ ...detail(production), versions: undefined }], total: 1, page: 1, page_size: 20 });
    if (path === '/api/projects/3/prompts/7') return json(detail(production));
    if (path === '/api/projects/3/prompts/7/versions/41/lineage') return json({ items: [v1, v2], total: 2, page: 1, page_size: 100 });
    if (path === '/api/projects/3/prompts/7/production' && req.method === 'PUT') {
      production = (await req.clone().json()).version_id === 41 ? v2 : v1;
      return json(detail(production));
    }
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

describe('Prompts pages', () => {
  it('is a project tab listing each prompt with its latest and production versions', async () => {
    serve('viewer');
    renderAt('/projects/3/prompts');
    const tabs = await screen.findByRole('navigation', { name: 'Project sections' });
    expect(within(tabs).getByRole('link', { name: 'Prompts' })).toHaveAttribute('aria-current', 'page');
    const row = within(await screen.findByRole('table', { name: 'Prompts' })).getAllByRole('row')[1];
    expect(within(row).getByRole('link', { name: 'Support' })).toHaveAttribute('href', '/projects/3/prompts/7');
    expect(row).toHaveTextContent('v2Shorter answers');
    expect(within(row).getByText('v1')).toBeInTheDocument(); // the production badge
    expect(screen.queryByRole('button', { name: 'New prompt' })).not.toBeInTheDocument();
  });

  it('shows versions with parents, the lineage of the newest, and moves production for an editor', async () => {
    const fetch = serve('editor');
    renderAt('/projects/3/prompts/7');
    const table = await screen.findByRole('table', { name: 'Versions' });
    const [, second, first] = within(table).getAllByRole('row');
    expect(second).toHaveTextContent('from v1');
    expect(within(second).getByRole('link', { name: 'v1' })).toHaveAttribute('href', '/projects/3/prompts/7?version=40');
    expect(within(first).getByText('Production')).toBeInTheDocument();
    const lineage = await screen.findByRole('list', { name: 'Lineage' });
    expect(within(lineage).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      expect.stringMatching(/^v1 · Ada · .*First version$/),
      expect.stringMatching(/^v2 · Ada · .*Shorter answers$/),
    ]);
    await userEvent.click(within(table).getByRole('button', { name: 'Mark v2 as production' }));
    expect(await screen.findByText('Production: v2')).toBeInTheDocument();
    const put = requestsOf(fetch).find((r) => r.method === 'PUT');
    expect(await put?.json()).toEqual({ version_id: 41 });
    await waitFor(() => expect(within(table).getAllByText('Production')).toHaveLength(1));
    expect(within(table).getByRole('button', { name: 'Mark v1 as production' })).toBeInTheDocument();
  });

  it('compares any two versions and lets a viewer read without edit actions', async () => {
    serve('viewer');
    renderAt('/projects/3/prompts/7');
    const compare = await screen.findByRole('region', { name: 'Compare versions' });
    expect(within(compare).getByLabelText('From version')).toHaveDisplayValue('v1');
    expect(within(compare).getByLabelText('To version')).toHaveDisplayValue('v2');
    expect(within(compare).getByRole('region', { name: 'Template changes' }).querySelector('ins')).toHaveTextContent('briefly');
    await userEvent.selectOptions(within(compare).getByLabelText('To version'), 'v1');
    expect(within(compare).getByText(/same version is chosen twice/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Edit v/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /as production/ })).not.toBeInTheDocument();
  });
  it('marks production based on the prompt it read; a stale mark moves nothing and offers Reload or Keep mine', async () => {
    let stored = { ...detail(v1), row_version: 2 }; // someone saved since this page read version 1
    let reads = 0;
    const fetch = mockFetch(async (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/api/projects/3') return json(project('editor'));
      if (path === '/api/projects/3/prompts/7' && req.method === 'GET') return json(reads++ === 0 ? detail(v1) : stored);
      if (path === '/api/projects/3/prompts/7/versions/41/lineage') return json({ items: [v1, v2], total: 2, page: 1, page_size: 100 });
      if (path === '/api/projects/3/prompts/7/production' && req.method === 'PUT') {
        if (req.headers.get('If-Match') !== `"${stored.row_version}"`) {
          return json({ code: 'STALE_WRITE', status: 412, message: 'Changed', errors: {}, current: stored, current_version: stored.row_version }, 412);
        }
        stored = { ...detail(v2), row_version: stored.row_version + 1 };
        return json(stored);
      }
      return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
    });
    renderAt('/projects/3/prompts/7');
    const table = await screen.findByRole('table', { name: 'Versions' });
    await userEvent.click(within(table).getByRole('button', { name: 'Mark v2 as production' }));
    expect(await screen.findByText(/This was changed elsewhere/)).toBeInTheDocument();
    const puts = () => requestsOf(fetch).filter((r) => r.method === 'PUT');
    expect(puts().map((r) => r.headers.get('If-Match'))).toEqual(['"1"']);
    expect(within(table).getByRole('button', { name: 'Mark v2 as production' })).toBeInTheDocument(); // still v1

    await userEvent.click(screen.getByRole('button', { name: 'Keep mine' }));
    await waitFor(() => expect(puts().map((r) => r.headers.get('If-Match'))).toEqual(['"1"', '"2"']));
    await waitFor(() => expect(screen.queryByText(/This was changed elsewhere/)).not.toBeInTheDocument());
    await waitFor(() => expect(within(table).getByRole('button', { name: 'Mark v1 as production' })).toBeInTheDocument());
  });

  it('Reload after a stale production mark reads the prompt again and sends nothing', async () => {
    let reads = 0;
    const fetch = mockFetch(async (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/api/projects/3') return json(project('editor'));
      if (path === '/api/projects/3/prompts/7' && req.method === 'GET') {
        reads += 1;
        return json({ ...detail(v1), row_version: reads === 1 ? 1 : 2 });
      }
      if (path === '/api/projects/3/prompts/7/versions/41/lineage') return json({ items: [v1, v2], total: 2, page: 1, page_size: 100 });
      if (req.method === 'PUT') return json({ code: 'STALE_WRITE', status: 412, message: 'Changed', errors: {}, current: { ...detail(v1), row_version: 2 }, current_version: 2 }, 412);
      return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
    });
    renderAt('/projects/3/prompts/7');
    const table = await screen.findByRole('table', { name: 'Versions' });
    await userEvent.click(within(table).getByRole('button', { name: 'Mark v2 as production' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Reload' }));
    await waitFor(() => expect(reads).toBeGreaterThanOrEqual(2));
    expect(screen.queryByText(/This was changed elsewhere/)).not.toBeInTheDocument();
    expect(requestsOf(fetch).filter((r) => r.method === 'PUT')).toHaveLength(1);
    // the next mark is based on the version read again
    await userEvent.click(within(table).getByRole('button', { name: 'Mark v2 as production' }));
    await waitFor(() => expect(requestsOf(fetch).filter((r) => r.method === 'PUT').map((r) => r.headers.get('If-Match'))).toEqual(['"1"', '"2"']));
  });
});
