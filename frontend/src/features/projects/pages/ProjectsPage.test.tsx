import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { ProjectsPage } from './ProjectsPage';

const page = (items: unknown[], total = items.length) => ({ items, total, page: 1, page_size: 20 });
const project = (id: number, name: string, role = 'owner') => ({
  id, name, slug: name.toLowerCase(), description: `About ${name}`, role, member_count: 2,
  created_at: new Date().toISOString(), updated_at: new Date(Date.now() - 3 * 60_000).toISOString(),
});

const listCalls = (fn: ReturnType<typeof mockFetch>) =>
  requestsOf(fn).map((r) => new URL(r.url)).filter((u) => u.pathname === '/api/projects');

describe('ProjectsPage', () => {
  it('shows a call to create the first project when there are none', async () => {
    mockFetch(() => json(page([])));
    renderWithProviders(<ProjectsPage />);
    expect(screen.getByRole('status', { name: 'Loading projects' })).toBeInTheDocument();
    expect(await screen.findByText('No projects yet')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Create your first project' })).toBeInTheDocument();
  });

  it('shows the server message and retries on request', async () => {
    let calls = 0;
    mockFetch(() => {
      calls += 1;
      return calls === 1
        ? json({ code: 'INTERNAL_ERROR', status: 500, message: 'The database is unavailable', errors: {} }, 500)
        : json(page([project(1, 'Alpha')]));
    });
    renderWithProviders(<ProjectsPage />);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load projects');
    expect(alert).toHaveTextContent('The database is unavailable');
    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('link', { name: 'Alpha' })).toHaveAttribute('href', '/projects/1');
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('lists projects with role, member count and relative update time', async () => {
    mockFetch(() => json(page([project(1, 'Alpha'), project(2, 'Beta', 'viewer')], 45)));
    renderWithProviders(<ProjectsPage />);
    const list = await screen.findByRole('list', { name: 'Projects' });
    expect(list).toHaveTextContent('Alpha');
    expect(list).toHaveTextContent('Viewer');
    expect(list).toHaveTextContent('2 members');
    expect(list).toHaveTextContent('3 minutes ago');
    expect(screen.getByText(/Page 1 of 3/)).toBeInTheDocument();
  });

  it('searches only from 2 characters, debounced, and filters by role', async () => {
    const fetch = mockFetch(() => json(page([project(1, 'Alpha')])));
    renderWithProviders(<ProjectsPage />);
    await screen.findByRole('link', { name: 'Alpha' });
    const user = userEvent.setup();

    await user.type(screen.getByLabelText('Search projects'), 'a');
    expect(screen.getByText('Type at least 2 characters to search.')).toBeInTheDocument();
    await new Promise((r) => setTimeout(r, 400));
    expect(listCalls(fetch).some((u) => u.searchParams.has('q'))).toBe(false);

    await user.type(screen.getByLabelText('Search projects'), 'l');
    await waitFor(() => expect(listCalls(fetch).some((u) => u.searchParams.get('q') === 'al')).toBe(true));

    await user.selectOptions(screen.getByLabelText('Role'), 'editor');
    await waitFor(() =>
      expect(listCalls(fetch).at(-1)?.searchParams.get('role')).toBe('editor'),
    );
    expect(listCalls(fetch).at(-1)?.searchParams.get('page')).toBe('1');
    expect(listCalls(fetch).at(-1)?.searchParams.get('page_size')).toBe('20');
  });

  it('says nothing matches when a filter returns no projects', async () => {
    mockFetch((req) => json(page(new URL(req.url).searchParams.get('role') ? [] : [project(1, 'Alpha')])));
    renderWithProviders(<ProjectsPage />);
    await screen.findByRole('link', { name: 'Alpha' });
    await userEvent.selectOptions(screen.getByLabelText('Role'), 'admin');
    expect(await screen.findByText('No projects match')).toBeInTheDocument();
  });
});
