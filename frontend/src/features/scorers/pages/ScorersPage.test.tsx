import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { QueryClientProvider } from '@tanstack/react-query';
import { createMemoryRouter, RouterProvider } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { makeQueryClient } from '@/app/queryClient';
import { ProjectLayout } from '@/features/projects/pages/ProjectLayout';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { apiError, page, project, ts } from '@/test/providerFixtures';
import { ScorerEditorPage } from './ScorerEditorPage';
import { ScorersPage } from './ScorersPage';

const kinds = [
  {
    kind: 'contains', name: 'Contains text', description: 'The answer contains a given text.', mode: 'automatic', calls_judges: false, available: true, unavailable_reason: null,
    params_schema: { type: 'object', required: ['value'], properties: { value: { type: 'string', minLength: 1, description: 'The text' } } },
  },
  {
    kind: 'code_execution', name: 'Code execution', description: 'Runs code.', mode: 'automatic', calls_judges: false, available: false,
    unavailable_reason: 'This project does not allow code execution', params_schema: { type: 'object', properties: {} },
  },
];
const version = (n: number) => ({ id: n, scorer_id: 9, number: n, params: { value: 'Paris' }, note: null, created_by: 1, created_at: ts });
const scorer = { id: 9, name: 'Mentions Paris', kind: 'contains', description: null, archived_at: null, created_at: ts, latest: version(2) };

function serve(role: string, extra: (req: Request, path: string) => Response | undefined = () => undefined) {
  return mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    const hit = extra(req, path);
    if (hit) return hit;
    if (path === '/api/projects/3') return json(project(role));
    if (path === '/api/scorer-kinds') return json(kinds);
    if (path === '/api/projects/3/scorers' && req.method === 'GET') return json({ ...page([scorer]), page_size: 20 });
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}

function renderAt(route: string) {
  const router = createMemoryRouter(
    [
      {
        path: '/projects/:projectId',
        element: <ProjectLayout />,
        children: [
          { path: 'scorers', element: <ScorersPage /> },
          { path: 'scorers/:scorerId', element: <ScorerEditorPage /> },
        ],
      },
    ],
    { initialEntries: [route] },
  );
  render(
    <QueryClientProvider client={makeQueryClient({ retry: false })}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return router;
}

describe('ScorersPage', () => {
  it('lists scorers with their latest version and filters by kind on the server', async () => {
    const fetch = serve('editor');
    renderAt('/projects/3/scorers');
    const table = await screen.findByRole('table', { name: 'Scorers' });
    const row = within(table).getAllByRole('row')[1];
    expect(row).toHaveTextContent('Mentions Paris');
    expect(row).toHaveTextContent('v2');
    expect(within(row).getByRole('button', { name: 'Archive Mentions Paris' })).toBeInTheDocument();
    await userEvent.selectOptions(screen.getByLabelText('Kind'), 'contains');
    await screen.findByRole('table', { name: 'Scorers' });
    const asked = requestsOf(fetch).map((r) => new URL(r.url)).filter((u) => u.pathname === '/api/projects/3/scorers');
    expect(asked.at(-1)!.searchParams.get('kind')).toBe('contains');
    expect(asked.at(-1)!.searchParams.get('page')).toBe('1');
  });

  it('gives viewers no way to create, archive or restore', async () => {
    serve('viewer');
    renderAt('/projects/3/scorers');
    await screen.findByRole('table', { name: 'Scorers' });
    expect(screen.queryByRole('link', { name: 'New scorer' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Archive/ })).not.toBeInTheDocument();
  });
});

describe('ScorerEditorPage', () => {
  it('puts the 422 field errors next to their fields, keeps what was typed, and disables kinds the project forbids', async () => {
    const user = userEvent.setup();
    serve('editor', (req, path) =>
      path === '/api/projects/3/scorers' && req.method === 'POST'
        ? json(apiError(409, 'NAME_TAKEN', 'A scorer with this name already exists in the project', { json: { name: ['Name already in use'] } }), 409)
        : undefined,
    );
    renderAt('/projects/3/scorers/new');
    expect(await screen.findByRole('option', { name: /^Code execution/ })).toBeDisabled();
    // the code-execution notice belongs to that kind: not shown while another is chosen
    expect(screen.queryByText(/does not allow code execution/)).not.toBeInTheDocument();
    await user.type(screen.getByLabelText('Name'), 'Mentions Paris');
    await user.selectOptions(screen.getByLabelText('Kind'), 'contains');
    // the kind by its human name, its one line and its id beside it
    expect(screen.getByRole('option', { name: 'Contains text' })).toBeInTheDocument();
    expect(screen.getByLabelText('Kind')).toHaveAccessibleDescription('The answer contains a given text. contains');
    await user.type(screen.getByLabelText('Value'), 'Paris');
    await user.click(screen.getByRole('button', { name: 'Create scorer' }));
    const name = screen.getByLabelText('Name');
    expect(await screen.findByText('Name already in use')).toBeInTheDocument();
    expect(name).toHaveAccessibleDescription('Name already in use');
    expect(name).toHaveValue('Mentions Paris');
    expect(screen.getByLabelText('Value')).toHaveValue('Paris');
  });
});
