import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Role } from '@/api/types';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';

const ts = '2024-01-01T00:00:00Z';
const page = (items: unknown[]) => ({ items, total: items.length, page: 1, page_size: 20 });
const members = [
  { user_id: 1, email: 'me@example.com', name: 'Me', role: 'owner', created_at: ts },
  { user_id: 2, email: 'bo@example.com', name: null, role: 'viewer', created_at: ts },
];
const run = { id: 9, name: 'Demo run', status: 'pending', total: 24, succeeded: 0, failed: 0, created_at: ts, started_at: null, finished_at: null, dataset_version_id: 1, model_ids: [1, 2] };

function serve(role: Role, extra: (req: Request, path: string) => Response | undefined = () => undefined) {
  return mockFetch((req) => {
    const path = new URL(req.url).pathname;
    const hit = extra(req, path);
    if (hit) return hit;
    if (path === '/api/auth/me') return json({ id: 1, email: 'me@example.com', name: 'Me', created_at: ts });
    if (path === '/api/projects/3') return json({ id: 3, name: 'Alpha', slug: 'alpha', description: 'Our evals', role, member_count: 2, created_at: ts, updated_at: ts });
    if (path === '/api/projects/3/members') return json(page(members));
    if (path === '/api/projects/3/runs') return json(page([]));
    if (path === '/api/projects/3/audit') return json(page([]));
    if (path === '/api/projects/3/invites') return json({ items: [] });
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

const renderHome = () => renderProject('/projects/3');
const renderMembers = () => renderProject('/projects/3/members');

describe('project pages', () => {
  it('has tabs for runs, datasets, providers, models and members', async () => {
    serve('viewer', (_req, path) => (path.endsWith('/credentials') || path.endsWith('/models') || path.endsWith('/datasets') ? json(page([])) : path === '/api/provider-kinds' ? json([]) : undefined));
    renderHome();
    const tabs = await screen.findByRole('navigation', { name: 'Project sections' });
    expect(within(tabs).getByRole('link', { name: 'Runs' })).toHaveAttribute('aria-current', 'page');
    expect(await screen.findByText('No runs yet')).toBeInTheDocument();
    await userEvent.click(within(tabs).getByRole('link', { name: 'Datasets' }));
    expect(await screen.findByText('Import or generate your first dataset')).toBeInTheDocument();
    expect(within(tabs).getByRole('link', { name: 'Datasets' })).toHaveAttribute('href', '/projects/3/datasets');
    await userEvent.click(within(tabs).getByRole('link', { name: 'Providers' }));
    expect(await screen.findByText('No providers yet')).toBeInTheDocument();
    expect(within(tabs).getByRole('link', { name: 'Providers' })).toHaveAttribute('aria-current', 'page');
    await userEvent.click(within(tabs).getByRole('link', { name: 'Models' }));
    expect(await screen.findByText('No models yet')).toBeInTheDocument();
    await userEvent.click(within(tabs).getByRole('link', { name: 'Members' }));
    expect(await screen.findByRole('table', { name: 'Members' })).toBeInTheDocument();
    expect(within(tabs).getByRole('link', { name: 'Members' })).toHaveAttribute('href', '/projects/3/members');
  });

  it('shows "Project not found" for a project the user cannot see', async () => {
    mockFetch(() => json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404));
    renderProject('/projects/99/providers');
    expect(await screen.findByText('Project not found')).toBeInTheDocument();
  });

  it('hides run controls from a viewer', async () => {
    serve('viewer');
    renderHome();
    expect(await screen.findByRole('heading', { level: 1, name: 'Alpha' })).toBeInTheDocument();
    expect(await screen.findByText('No runs yet')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Start demo run' })).not.toBeInTheDocument();
  });

  it('hides member management from a viewer', async () => {
    serve('viewer');
    renderMembers();
    const table = await screen.findByRole('table', { name: 'Members' });
    expect(within(table).getByText('bo@example.com')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Remove/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('combobox', { name: /Role for/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('form', { name: 'Add member' })).not.toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Activity' })).not.toBeInTheDocument();
  });

  it('lets an owner change a role and shows the server refusal', async () => {
    const fetch = serve('owner', (req, path) =>
      req.method === 'PATCH' && path === '/api/projects/3/members/1'
        ? json({ code: 'LAST_OWNER', status: 409, message: 'A project needs at least one owner', errors: {} }, 409)
        : undefined,
    );
    renderMembers();
    const select = await screen.findByRole('combobox', { name: 'Role for me@example.com' });
    await userEvent.selectOptions(select, 'admin');
    expect(await screen.findByText('A project needs at least one owner')).toBeInTheDocument();
    const patch = requestsOf(fetch).find((r) => r.method === 'PATCH')!;
    expect(await patch.json()).toEqual({ role: 'admin' });
    expect(screen.getByRole('heading', { name: 'Activity' })).toBeInTheDocument();
  });

  it('removes a member after confirmation; Escape cancels', async () => {
    const fetch = serve('owner', (req) => (req.method === 'DELETE' ? new Response(null, { status: 204 }) : undefined));
    renderMembers();
    await userEvent.click(await screen.findByRole('button', { name: 'Remove bo@example.com' }));
    expect(screen.getByRole('dialog', { name: 'Remove member' })).toBeInTheDocument();
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Remove bo@example.com' }));
    await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Remove member' }));
    const del = requestsOf(fetch).find((r) => r.method === 'DELETE')!;
    expect(new URL(del.url).pathname).toBe('/api/projects/3/members/2');
  });

  it('starts a demo run and opens its page', async () => {
    const fetch = serve('editor', (req, path) => (req.method === 'POST' && path === '/api/projects/3/runs/demo' ? json(run, 202) : undefined));
    renderHome();
    expect(await screen.findByText('No runs yet')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Start demo run' }));
    expect(await screen.findByText('Run page')).toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => r.method === 'POST' && new URL(r.url).pathname === '/api/projects/3/runs/demo')).toBe(true);
  });
});
