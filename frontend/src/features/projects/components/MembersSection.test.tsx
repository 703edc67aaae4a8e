import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { MembersSection } from './MembersSection';

const ts = '2026-01-01T00:00:00Z';
const member = (over: Record<string, unknown> = {}) => ({ user_id: 8, email: 'bo@example.com', name: 'Bo', role: 'viewer', created_at: ts, row_version: 3, ...over });
const page = (items: unknown[]) => ({ items, total: items.length, page: 1, page_size: 100 });

describe('MembersSection: a role change is based on the version it listed', () => {
  it('sends If-Match; a stale change overwrites nothing, says so, and Keep mine resends on the newer version', async () => {
    let listed = [member()];
    const fetch = mockFetch(async (req) => {
      const path = new URL(req.url).pathname;
      if (req.method === 'GET' && path === '/api/projects/3/members') return json(page(listed));
      if (req.method === 'PATCH' && req.headers.get('If-Match') === '"3"') {
        return json({ code: 'STALE_WRITE', status: 412, message: 'Changed since you read it', errors: {}, current: member({ role: 'editor', row_version: 4 }), current_version: 4 }, 412);
      }
      if (req.method === 'PATCH') {
        listed = [member({ role: 'reviewer', row_version: 5 })];
        return json(listed[0]);
      }
      return json({}, 200);
    });
    renderWithProviders(<MembersSection projectId={3} role="owner" meId={1} />);
    await userEvent.selectOptions(await screen.findByRole('combobox', { name: 'Role for bo@example.com' }), 'reviewer');
    expect(await screen.findByText(/This was changed elsewhere/)).toBeInTheDocument();
    expect(screen.getByText(/bo@example.com: Reviewer/)).toBeInTheDocument();
    const patches = () => requestsOf(fetch).filter((r) => r.method === 'PATCH');
    expect(patches()).toHaveLength(1);
    expect(patches()[0].headers.get('If-Match')).toBe('"3"');
    expect(screen.queryByRole('alert', { name: /Changed since/ })).not.toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: 'Keep mine' }));
    await waitFor(() => expect(patches()).toHaveLength(2));
    expect(patches()[1].headers.get('If-Match')).toBe('"4"');
    expect(await patches()[1].json()).toEqual({ role: 'reviewer' });
    await waitFor(() => expect(screen.queryByText(/This was changed elsewhere/)).not.toBeInTheDocument());
    await waitFor(() => expect(screen.getByRole('combobox', { name: 'Role for bo@example.com' })).toHaveValue('reviewer'));
  });

  it('Reload drops the refused change and reads the members again', async () => {
    const fetch = mockFetch(async (req) => {
      const path = new URL(req.url).pathname;
      if (req.method === 'GET' && path === '/api/projects/3/members') return json(page([member()]));
      if (req.method === 'PATCH') return json({ code: 'STALE_WRITE', status: 412, message: 'Changed', errors: {}, current: member({ row_version: 4 }), current_version: 4 }, 412);
      return json({}, 200);
    });
    renderWithProviders(<MembersSection projectId={3} role="owner" meId={1} />);
    await userEvent.selectOptions(await screen.findByRole('combobox', { name: 'Role for bo@example.com' }), 'editor');
    await userEvent.click(await screen.findByRole('button', { name: 'Reload' }));
    await waitFor(() => expect(requestsOf(fetch).filter((r) => r.method === 'GET').length).toBeGreaterThanOrEqual(2));
    expect(screen.queryByText(/This was changed elsewhere/)).not.toBeInTheDocument();
    expect(requestsOf(fetch).filter((r) => r.method === 'PATCH')).toHaveLength(1);
  });
});
